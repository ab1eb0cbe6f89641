import AppStoreModel
import Foundation
import Minting
import PayStorm
import Signing

extension Command {
    /// `paystorm mint`: one signed notification, transaction or renewal info on standard output.
    static let mint = Command(
        name: "mint",
        summary: "mint a signed notification, transaction or renewal info",
        help: MintCommand.help
    ) { arguments in
        print(try MintCommand.output(arguments))
        return .success
    }
}

/// The parsing and minting behind `paystorm mint`, apart from printing so that tests can call it.
enum MintCommand {
    static let help: String = {
        var text = """
            paystorm mint: mint App Store signed data with a PayStorm test PKI

            Usage:
              paystorm mint --pki DIR --type TYPE [--subtype SUBTYPE] [OPTIONS]
              paystorm mint --pki DIR --transaction [--type TYPE [--subtype SUBTYPE]] [OPTIONS]
              paystorm mint --pki DIR --renewal-info [--type TYPE [--subtype SUBTYPE]] [OPTIONS]

            A notification is printed as the webhook body {"signedPayload":"..."}, so that
              paystorm mint --pki pki --type DID_RENEW |
                curl -H 'Content-Type: application/json' --data-binary @- http://127.0.0.1:8080/notifications
            works; a transaction or renewal info is printed as the bare JWS. Nested JWS (signedTransactionInfo,
            signedRenewalInfo, signedAppTransactionInfo) describe the same purchase as the notification.

            Options:
              --pki DIR              the PKI written by 'paystorm pki init DIR' (required)
              --type TYPE            notificationType; TYPE/SUBTYPE also works
              --subtype SUBTYPE      subtype (omit for none)
              --transaction          mint a bare signed transaction (shaped by --type if given)
              --renewal-info         mint a bare signed renewal info (shaped by --type if given)
              --product ID           productId (default com.example.paystorm.monthly)
              --product-type TYPE    Auto-Renewable Subscription | Non-Consumable | Consumable |
                                     Non-Renewing Subscription (or auto-renewable, non-consumable,
                                     consumable, non-renewing); default: what the type implies
              --account-token UUID   appAccountToken (must be a UUID)
              --environment ENV      Sandbox (default) | Production | Xcode | LocalTesting
              --bundle-id ID         bundleId (default com.example.paystorm)
              --app-apple-id N       appAppleId (default 1234567890)
              --signed-date MS       signedDate in UNIX milliseconds (default now)
              --notification-uuid U  notificationUUID (default a fresh one; reuse one to mint a retry)
              --transaction-id N     transactionId (decimal digits; default a fresh one), e.g. to mint the
                                     refund of a purchase the backend already has
              --original-transaction-id N
                                     originalTransactionId (decimal digits; default: the transaction's own
                                     ID for a first purchase, a fresh one for a renewal)
              --forge NAME           a forged variant (below)
              --jws                  print a notification's signedPayload instead of the webhook body
              --allow-unknown-type   mint a TYPE/SUBTYPE pair outside the matrix (as a subscription event)

            Notification types and subtypes (reference §5):

            """
        for kind in NotificationMatrix.all {
            text += "  \(kind)\n"
        }
        text += "\nForgeries (--forge) and the status Apple's SignedDataVerifier answers:\n"
        let width = Forgery.allCases.map(\.rawValue.count).max() ?? 0
        for forgery in Forgery.allCases {
            let pad = String(repeating: " ", count: width - forgery.rawValue.count)
            text += "  \(forgery.rawValue)\(pad)  \(forgery.summary) (\(forgery.expectedStatus(for: .notification)))\n"
        }
        text += """

            Exit codes: 0 minted; 64 bad option (unknown type, subtype, forgery, product type, invalid UUID or
            transaction ID); 65 malformed PKI (also a certificate its issuer did not sign); 66 missing or
            unreadable PKI; 70 internal error.

            """
        return text
    }()

    /// Parses the arguments, mints, and returns what to print.
    /// - Throws: `CLIError` with the documented exit code.
    static func output(_ arguments: Arguments) throws -> String {
        var args = arguments
        let pkiDirectory = try args.option("--pki")
        let typeOption = try args.option("--type")
        let subtypeOption = try args.option("--subtype")
        let bareTransaction = args.flag("--transaction")
        let bareRenewal = args.flag("--renewal-info")
        let productId = try args.option("--product") ?? "com.example.paystorm.monthly"
        let productTypeOption = try args.option("--product-type")
        let accountToken = try args.option("--account-token")
        let environmentOption = try args.option("--environment") ?? Environment.sandbox.rawValue
        let bundleId = try args.option("--bundle-id") ?? "com.example.paystorm"
        let appAppleIdOption = try args.option("--app-apple-id")
        let signedDateOption = try args.option("--signed-date")
        let notificationUUID = try args.option("--notification-uuid")
        let transactionId = try args.option("--transaction-id")
        let originalTransactionId = try args.option("--original-transaction-id")
        let forgeOption = try args.option("--forge")
        let printJWS = args.flag("--jws")
        let allowUnknown = args.flag("--allow-unknown-type")
        try args.finish()

        guard let pkiDirectory else {
            throw CLIError(.usage, "missing --pki DIR (create one with 'paystorm pki init DIR')")
        }
        if bareTransaction && bareRenewal {
            throw CLIError(.usage, "choose one of --transaction and --renewal-info")
        }
        let kind = try parseKind(type: typeOption, subtype: subtypeOption, allowUnknown: allowUnknown)
        if kind == nil && !bareTransaction && !bareRenewal {
            throw CLIError(.usage, "choose --type TYPE, --transaction or --renewal-info (see 'paystorm mint --help')")
        }
        let productType = try productTypeOption.map(parseProductType)
        if let accountToken, !AppStoreJSON.isValidUUID(accountToken) {
            throw CLIError(.usage, "--account-token '\(accountToken)' is not a UUID")
        }
        let environment = Environment(rawValue: environmentOption)
        guard environment.isKnown else {
            throw CLIError(
                .usage,
                "unknown environment '\(environmentOption)' (known: \(Environment.allKnown.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        let appAppleId = try appAppleIdOption.map { text in
            guard let value = Int64(text), value > 0 else {
                throw CLIError(.usage, "--app-apple-id expects a positive integer, got '\(text)'")
            }
            return value
        }
        let signedDate =
            try signedDateOption.map { text in
                guard let value = Int64(text), value >= 0 else {
                    throw CLIError(.usage, "--signed-date expects UNIX milliseconds, got '\(text)'")
                }
                return value
            } ?? Minter.nowMilliseconds()
        if let notificationUUID, !AppStoreJSON.isValidUUID(notificationUUID) {
            throw CLIError(.usage, "--notification-uuid '\(notificationUUID)' is not a UUID")
        }
        for (flag, value) in [
            ("--transaction-id", transactionId), ("--original-transaction-id", originalTransactionId),
        ] {
            // Apple's transaction identifiers are decimal strings; a backend may well parse them as integers.
            if let value, value.isEmpty || value.count > 20 || !value.allSatisfy({ $0.isASCII && $0.isNumber }) {
                throw CLIError(.usage, "\(flag) expects 1 to 20 decimal digits, got '\(value)'")
            }
        }
        /// The purchase the kind implies, with the identifiers the user gave.
        func purchase(_ kind: NotificationKind?, _ productType: ProductType?) -> Purchase {
            var purchase = Purchase(
                kind: kind,
                productId: productId,
                productType: productType,
                appAccountToken: accountToken,
                signedDate: signedDate
            )
            if let transactionId {
                // A first purchase is its own original; keep it so unless the original is given too.
                if purchase.originalTransactionId == purchase.transactionId {
                    purchase.originalTransactionId = transactionId
                }
                purchase.transactionId = transactionId
            }
            if let originalTransactionId { purchase.originalTransactionId = originalTransactionId }
            return purchase
        }
        let forgery = try forgeOption.map { name in
            let forgery = Forgery(rawValue: name)
            guard forgery.isKnown else {
                throw CLIError(
                    .usage,
                    "unknown forgery '\(name)' (known: \(Forgery.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            return forgery
        }

        let pki = try loadPKI(pkiDirectory)
        let app = AppIdentity(bundleId: bundleId, appAppleId: appAppleId ?? 1_234_567_890, environment: environment)
        let minter = Minter(pki: pki, app: app)
        do {
            if bareTransaction {
                return try minter.transaction(
                    purchase(kind, productType),
                    kind: kind,
                    signedDate: signedDate,
                    forgery: forgery
                )
                .jws
            }
            if bareRenewal {
                if let productType, productType != .autoRenewableSubscription {
                    throw CLIError(
                        .usage,
                        "a renewal info describes an auto-renewable subscription, not '\(productType)'"
                    )
                }
                return try minter.renewalInfo(
                    purchase(kind, .autoRenewableSubscription),
                    kind: kind,
                    signedDate: signedDate,
                    forgery: forgery
                )
                .jws
            }
            guard let kind else { throw CLIError(.internalError, "no kind to mint") }
            let minted = try minter.notification(
                kind,
                purchase: purchase(kind, productType),
                signedDate: signedDate,
                notificationUUID: notificationUUID,
                forgery: forgery
            )
            return printJWS ? minted.signedPayload : String(decoding: minted.body, as: UTF8.self)
        } catch let error as MintError {
            throw CLIError(.usage, error.message)
        }
    }

    /// The notification kind named by `--type`/`--subtype`, or `nil` when neither is given.
    static func parseKind(type: String?, subtype: String?, allowUnknown: Bool) throws -> NotificationKind? {
        guard var typeName = type else {
            if let subtype { throw CLIError(.usage, "--subtype \(subtype) needs --type") }
            return nil
        }
        var subtypeName = subtype
        if let slash = typeName.firstIndex(of: "/") {
            if subtypeName != nil {
                throw CLIError(.usage, "give the subtype either in --type TYPE/SUBTYPE or in --subtype")
            }
            subtypeName = String(typeName[typeName.index(after: slash)...])
            typeName = String(typeName[..<slash])
        }
        if subtypeName?.isEmpty == true { subtypeName = nil }
        let notificationType = NotificationTypeV2(rawValue: typeName)
        let subtypeValue = subtypeName.map(Subtype.init(rawValue:))
        if let row = NotificationMatrix.kind(notificationType, subtypeValue) { return row }
        let hint = " (add --allow-unknown-type to mint it anyway)"
        if allowUnknown {
            // Keep the shape Apple uses for the type if it is known, otherwise a subscription event.
            let content =
                NotificationMatrix.all.first { $0.notificationType == notificationType }?.content ?? .subscription
            return NotificationKind(notificationType, subtypeValue, content)
        }
        guard notificationType.isKnown else {
            throw CLIError(.usage, "unknown notification type '\(typeName)'; see 'paystorm mint --help'" + hint)
        }
        let valid = NotificationMatrix.all.filter { $0.notificationType == notificationType }
            .map { $0.subtype?.rawValue ?? "(none)" }.joined(separator: ", ")
        if let subtypeName, !Subtype(rawValue: subtypeName).isKnown {
            throw CLIError(.usage, "unknown subtype '\(subtypeName)'; \(typeName) takes: \(valid)" + hint)
        }
        throw CLIError(.usage, "\(typeName) has no subtype '\(subtypeName ?? "(none)")'; it takes: \(valid)" + hint)
    }

    /// A product type from its exact name or a short alias.
    static func parseProductType(_ text: String) throws -> ProductType {
        let aliases: [String: ProductType] = [
            "auto-renewable": .autoRenewableSubscription, "subscription": .autoRenewableSubscription,
            "non-consumable": .nonConsumable, "consumable": .consumable, "non-renewing": .nonRenewingSubscription,
        ]
        if let exact = ProductType.allKnown.first(where: { $0.rawValue == text }) { return exact }
        if let alias = aliases[text.lowercased()] { return alias }
        let known = ProductType.allKnown.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        throw CLIError(.usage, "unknown product type '\(text)' (known: \(known), or auto-renewable, consumable...)")
    }

    /// Loads a PKI directory, mapping its errors to exit codes: 66 missing or unreadable, 65 malformed.
    static func loadPKI(_ directory: String) throws -> TestPKI {
        do {
            return try TestPKI.load(from: directory)
        } catch let error as PKIError {
            throw CLIError(error.kind == .malformed ? .badInput : .noInput, error.message)
        } catch {
            throw CLIError(.noInput, "cannot load the PKI in \(directory): \(error)")
        }
    }
}
