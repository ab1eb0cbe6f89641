import AppStoreModel
import Foundation
import Minting
import PayStorm
import RunControl
import Signing

/// `paystorm mint receipt`: a legacy app receipt (PKCS#7 over Apple's ASN.1 receipt) in base64, as a device
/// sends it to a backend that checks receipts.
enum MintReceipt {
    static var help: String {
        var text = """

            App receipts:
              paystorm mint receipt --pki DIR [--purchase PRODUCT[:TRANSACTION_ID]]... [--transactions FILE]
                                    [--product-type TYPE] [--bundle-id ID] [--app-apple-id N] [--app-version V]
                                    [--environment ENV] [--created MS] [--forge NAME]
              prints the base64 app receipt (PKCS#7 SignedData signed by the PKI's leaf) listing one in-app purchase
              per --purchase (a first purchase of PRODUCT, TRANSACTION_ID or a fresh one, of --product-type, default
              auto-renewable, made a minute before --created) and per transaction in FILE (a JSON array of
              transaction payloads in Apple's JSON, dates in UNIX ms, such as decoded signedTransaction payloads).
              --app-version is the app's version (default 1.0); --created the receipt's creation date in UNIX ms
              (default now). --forge NAME mints the receipt a device request forged with NAME carries, and the
              status verifyReceipt answers for it:

            """
        let width = Forgery.allCases.map(\.rawValue.count).max() ?? 0
        for forgery in Forgery.allCases {
            let pad = String(repeating: " ", count: width - forgery.rawValue.count)
            text += "    \(forgery.rawValue)\(pad)  \(forgery.receiptSummary)\n"
        }
        return text + """
              Exit codes as above; also 66 for a missing FILE and 65 for a FILE that is not such JSON.

            """
    }

    /// Parses the arguments after `receipt`, mints, and returns the base64 receipt.
    /// - Throws: `CLIError` with the documented exit code.
    static func output(_ arguments: Arguments) throws -> String {
        var args = arguments
        let pkiDirectory = try args.option("--pki")
        let purchases = try args.options("--purchase")
        let transactionsFile = try args.option("--transactions")
        let productType = try args.option("--product-type").map(MintCommand.parseProductType)
        let bundleId = try args.option("--bundle-id") ?? "com.example.paystorm"
        let appAppleId = try args.option("--app-apple-id").map(MintOptions.appAppleId) ?? 1_234_567_890
        let appVersion = try args.option("--app-version") ?? "1.0"
        let environment = try MintOptions.environment(args.option("--environment") ?? Environment.sandbox.rawValue)
        let created = try args.option("--created").map(milliseconds)
        let forgery = try args.option("--forge").map(MintOptions.forgery)
        try args.finish()
        guard let pkiDirectory else {
            throw CLIError(.usage, "missing --pki DIR (create one with 'paystorm pki init DIR')")
        }
        let creationDate = created ?? Minter.nowMilliseconds()
        var inApp = try purchases.map {
            try purchase($0, productType: productType ?? .autoRenewableSubscription, before: creationDate)
        }
        if let transactionsFile { inApp += try transactions(in: transactionsFile) }
        let pki = try MintCommand.loadPKI(pkiDirectory)
        let app = AppIdentity(
            bundleId: bundleId,
            appAppleId: appAppleId,
            bundleVersion: appVersion,
            environment: environment
        )
        do {
            return try Minter(pki: pki, app: app).appReceipt(inApp, creationDate: creationDate, forgery: forgery)
        } catch {
            throw CLIError(.internalError, "cannot sign the receipt: \(error)")
        }
    }

    /// `--created`: UNIX milliseconds in the range `mint` accepts for a signed date.
    private static func milliseconds(_ text: String) throws -> Int64 {
        guard let value = Int64(text), MintOptions.signedDateBounds.contains(value) else {
            throw CLIError(.usage, "--created expects UNIX milliseconds from 1971 to 9999, got '\(text)'")
        }
        return value
    }

    /// `PRODUCT[:TRANSACTION_ID]`: a first purchase a minute before the receipt.
    private static func purchase(
        _ text: String,
        productType: ProductType,
        before date: Int64
    ) throws
        -> JWSTransactionDecodedPayload
    {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard !parts[0].isEmpty else {
            throw CLIError(.usage, "--purchase expects PRODUCT[:TRANSACTION_ID], got '\(text)'")
        }
        var transaction = Minter.impliedTransaction(
            by: nil,
            productId: parts[0],
            productType: productType,
            signedDate: date
        )
        if parts.count == 2 {
            try MintOptions.checkTransactionId(parts[1], flag: "--purchase \(parts[0]):")
            transaction.transactionId = parts[1]
            transaction.originalTransactionId = parts[1]
        }
        return transaction
    }

    /// The transaction payloads of a JSON file: an array of objects in Apple's JSON.
    private static func transactions(in path: String) throws -> [JWSTransactionDecodedPayload] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError(.noInput, "cannot read --transactions \(path)")
        }
        do {
            return try AppStoreJSON.decoder().decode([JWSTransactionDecodedPayload].self, from: data)
        } catch {
            throw CLIError(
                .badInput,
                "--transactions \(path) is not a JSON array of transaction payloads (Apple's keys, dates in ms)"
            )
        }
    }
}
