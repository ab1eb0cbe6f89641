import AppStoreModel
import Minting
import PayStorm
import RunControl

/// `paystorm mint`'s options, parsed and validated: every bad value is a usage error naming its flag.
struct MintOptions {
    /// What to print: a webhook body for a notification kind, or a bare JWS.
    enum Shape {
        case notification(NotificationKind)
        case transaction
        case renewalInfo
    }

    var pkiDirectory: String
    var shape: Shape
    /// The notification kind that shapes the payloads (nil for a bare transaction or renewal info without --type).
    var kind: NotificationKind?
    var productId: String
    var productType: ProductType?
    var accountToken: String?
    var app: AppIdentity
    var signedDate: Int64
    var notificationUUID: String?
    var transactionId: String?
    var originalTransactionId: String?
    var forgery: Forgery?
    var printJWS: Bool

    /// Parses `arguments` (all of them: an unknown option is an error).
    /// - Throws: `CLIError(.usage)` naming the flag and the value.
    init(_ arguments: Arguments) throws {
        var args = arguments
        let pkiDirectory = try args.option("--pki")
        let typeOption = try args.option("--type")
        let subtypeOption = try args.option("--subtype")
        let bareTransaction = args.flag("--transaction")
        let bareRenewal = args.flag("--renewal-info")
        productId = try args.option("--product") ?? "com.example.paystorm.monthly"
        let productTypeOption = try args.option("--product-type")
        accountToken = try args.option("--account-token")
        let environmentOption = try args.option("--environment") ?? Environment.sandbox.rawValue
        let bundleId = try args.option("--bundle-id") ?? "com.example.paystorm"
        let appAppleIdOption = try args.option("--app-apple-id")
        let signedDateOption = try args.option("--signed-date")
        notificationUUID = try args.option("--notification-uuid")
        transactionId = try args.option("--transaction-id")
        originalTransactionId = try args.option("--original-transaction-id")
        let forgeOption = try args.option("--forge")
        printJWS = args.flag("--jws")
        let allowUnknown = args.flag("--allow-unknown-type")
        try args.finish()

        guard let pkiDirectory else {
            throw CLIError(.usage, "missing --pki DIR (create one with 'paystorm pki init DIR')")
        }
        self.pkiDirectory = pkiDirectory
        kind = try MintCommand.parseKind(type: typeOption, subtype: subtypeOption, allowUnknown: allowUnknown)
        shape = try Self.shape(kind: kind, transaction: bareTransaction, renewalInfo: bareRenewal)
        productType = try productTypeOption.map(MintCommand.parseProductType)
        if case .renewalInfo = shape, let productType, productType != .autoRenewableSubscription {
            throw CLIError(.usage, "a renewal info describes an auto-renewable subscription, not '\(productType)'")
        }
        for (flag, value) in [("--account-token", accountToken), ("--notification-uuid", notificationUUID)] {
            if let value, !AppStoreJSON.isValidUUID(value) {
                throw CLIError(.usage, "\(flag) '\(value)' is not a UUID")
            }
        }
        for (flag, value) in [
            ("--transaction-id", transactionId), ("--original-transaction-id", originalTransactionId),
        ] {
            try Self.checkTransactionId(value, flag: flag)
        }
        app = AppIdentity(
            bundleId: bundleId,
            appAppleId: try appAppleIdOption.map(Self.appAppleId) ?? 1_234_567_890,
            environment: try Self.environment(environmentOption)
        )
        signedDate = try signedDateOption.map(Self.milliseconds) ?? Minter.nowMilliseconds()
        forgery = try forgeOption.map(Self.forgery)
    }

    /// The transaction the kind implies, with the identifiers the user gave.
    func transaction(_ productType: ProductType?) -> JWSTransactionDecodedPayload {
        var transaction = Minter.impliedTransaction(
            by: kind,
            productId: productId,
            productType: productType,
            appAccountToken: accountToken,
            signedDate: signedDate
        )
        if let transactionId {
            // A first purchase is its own original; keep it so unless the original is given too.
            if transaction.originalTransactionId == transaction.transactionId {
                transaction.originalTransactionId = transactionId
            }
            transaction.transactionId = transactionId
        }
        if let originalTransactionId { transaction.originalTransactionId = originalTransactionId }
        return transaction
    }

    private static func shape(kind: NotificationKind?, transaction: Bool, renewalInfo: Bool) throws -> Shape {
        switch (transaction, renewalInfo) {
        case (true, true): throw CLIError(.usage, "choose one of --transaction and --renewal-info")
        case (true, false): return .transaction
        case (false, true): return .renewalInfo
        case (false, false):
            guard let kind else {
                throw CLIError(
                    .usage,
                    "choose --type TYPE, --transaction or --renewal-info (see 'paystorm mint --help')"
                )
            }
            return .notification(kind)
        }
    }

    static func environment(_ text: String) throws -> Environment {
        try known(Environment(rawValue: text), text, isKnown: \.isKnown, what: "environment", Environment.allKnown)
    }

    static func appAppleId(_ text: String) throws -> Int64 {
        guard let value = Int64(text), value > 0 else {
            throw CLIError(.usage, "--app-apple-id expects a positive integer, got '\(text)'")
        }
        return value
    }

    /// The signed dates `mint` accepts, in UNIX milliseconds: 1971-01-01 to 9999-12-31, so that every date
    /// placed relative to the signed date (months before it, days after it) stays a date.
    static let signedDateBounds: ClosedRange<Int64> = 31_536_000_000...253_402_300_799_999

    private static func milliseconds(_ text: String) throws -> Int64 {
        guard let value = Int64(text) else {
            throw CLIError(.usage, "--signed-date expects UNIX milliseconds, got '\(text)'")
        }
        guard signedDateBounds.contains(value) else {
            throw CLIError(
                .usage,
                "--signed-date must be from \(signedDateBounds.lowerBound) (1971-01-01) to \(signedDateBounds.upperBound) (9999-12-31) UNIX milliseconds, got \(value)"
            )
        }
        return value
    }

    /// Apple's transaction identifiers are decimal strings; a backend may well parse them as integers.
    static func checkTransactionId(_ value: String?, flag: String) throws {
        if let value, value.isEmpty || value.count > 20 || !value.allSatisfy({ $0.isASCII && $0.isNumber }) {
            throw CLIError(.usage, "\(flag) expects 1 to 20 decimal digits, got '\(value)'")
        }
    }

    /// `--forge NAME`: a forgery PayStorm knows, else a usage error listing them.
    static func forgery(_ name: String) throws -> Forgery {
        try known(Forgery(rawValue: name), name, isKnown: \.isKnown, what: "forgery", Forgery.allCases)
    }

    /// `value` when it is one of Apple's (or PayStorm's) names, else a usage error listing them.
    private static func known<Value: RawRepresentable<String>>(
        _ value: Value,
        _ text: String,
        isKnown: KeyPath<Value, Bool>,
        what: String,
        _ all: [Value]
    ) throws -> Value {
        guard value[keyPath: isKnown] else {
            throw CLIError(.usage, "unknown \(what) '\(text)' (known: \(all.map(\.rawValue).joined(separator: ", ")))")
        }
        return value
    }
}
