internal import AppStoreModel
internal import Foundation
internal import HTTPServer
internal import Minting
internal import Primitives
internal import Signing

/// Apple's legacy `POST /verifyReceipt`, answered from the receipt the backend sends (its signature and chain
/// under the test root, its environment against the host's, its in-app purchases) and from what the store knows
/// of its customer at the world's current time (see `latestAnswer`).
extension AppStoreServerAPI {
    /// The statuses PayStorm answers (Apple's numbers).
    enum ReceiptStatus {
        static let valid = 0
        static let notPost = 21000
        static let malformed = 21002
        static let unauthenticated = 21003
        static let sharedSecretMismatch = 21004
        static let unavailable = 21005
        static let sandboxReceiptOnProduction = 21007
        static let productionReceiptOnSandbox = 21008
        /// The last of Apple's internal data access errors (21100–21199), which come with `is-retryable`.
        static let internalDataAccess = 21199
    }

    /// Answers `/verifyReceipt`: HTTP 200 with a JSON body whose `status` tells the outcome, as Apple does. The
    /// API's faults strike it too, drawn like every endpoint's: a rate limit answers 21005 (the receipt server
    /// cannot answer now), a retryable error 21199 with `is-retryable`, an internal error HTTP 500, and a slow
    /// answer is held back.
    func verifyReceipt(_ request: HTTPRequest, now: Int64) -> APIAnswer {
        let endpoint = "verifyReceipt"
        let serverEnvironment = Self.receiptEnvironment(host: request.headers["host"]) ?? configuration.environment
        var body: [String: JSONValue] = ["environment": .string(serverEnvironment.rawValue)]
        switch faults.drawError(at: now, endpoint: endpoint, id: "") {
        case .internalError?:
            let text = Array("Internal Server Error".utf8)
            return APIAnswer(
                HTTPResponse(status: 500, headers: ["Content-Type": "text/plain"], body: text),
                endpoint: endpoint
            )
        case .rateLimit?:
            body["status"] = .number(String(ReceiptStatus.unavailable))
        case .retryableError?:
            body["status"] = .number(String(ReceiptStatus.internalDataAccess))
            body["is-retryable"] = .bool(true)
        default:
            body = verifyReceiptBody(request, serverEnvironment: serverEnvironment, now: now)
        }
        let response = HTTPResponse(
            status: 200,
            headers: ["Content-Type": "application/json"],
            body: Array(JSONValue.object(body).jsonText.utf8)
        )
        return APIAnswer(
            response,
            delaySeconds: faults.drawSlow(at: now, endpoint: endpoint, id: ""),
            endpoint: endpoint
        )
    }

    /// The environment of Apple's receipt hosts: `buy.itunes.apple.com` is Production,
    /// `sandbox.itunes.apple.com` Sandbox; nil for any other host.
    static func receiptEnvironment(host: String?) -> Environment? {
        let name = host?.split(separator: ":").first.map { $0.lowercased() }
        switch name {
        case "buy.itunes.apple.com": return .production
        case "sandbox.itunes.apple.com": return .sandbox
        default: return nil
        }
    }

    private func verifyReceiptBody(
        _ request: HTTPRequest,
        serverEnvironment: Environment,
        now: Int64
    )
        -> [String: JSONValue]
    {
        let environment: [String: JSONValue] = ["environment": .string(serverEnvironment.rawValue)]
        func status(_ code: Int) -> [String: JSONValue] {
            environment.merging(["status": .number(String(code))]) { first, _ in first }
        }
        guard request.method == "POST" else { return status(ReceiptStatus.notPost) }
        let fields = (try? JSONDecoder().decode([String: JSONValue].self, from: Data(request.body))) ?? [:]
        guard let base64 = fields["receipt-data"]?.stringValue else { return status(ReceiptStatus.malformed) }
        let receipt: ReadAppReceipt
        do {
            receipt = try AppReceipt.read(base64: base64, trusting: minter.pki.root)
        } catch {
            let malformed = (error as? AppReceiptError)?.kind == .malformed
            return status(malformed ? ReceiptStatus.malformed : ReceiptStatus.unauthenticated)
        }
        if receipt.app.environment == .sandbox && serverEnvironment == .production {
            return status(ReceiptStatus.sandboxReceiptOnProduction)
        }
        if receipt.app.environment == .production && serverEnvironment == .sandbox {
            return status(ReceiptStatus.productionReceiptOnSandbox)
        }
        // Apple asks the shared secret of receipts with auto-renewable subscriptions (the only ones with an expiry).
        if let secret = configuration.sharedSecret, receipt.inApp.contains(where: { $0.expiresDate != nil }),
            fields["password"]?.stringValue != secret
        {
            return status(ReceiptStatus.sharedSecretMismatch)
        }
        var answer = status(ReceiptStatus.valid)
        answer["receipt"] = .object(
            Self.receiptObject(receipt, purchases: receipt.inApp.map(Self.receiptPurchase), now: now)
        )
        answer.merge(latestAnswer(receipt, excludingOld: fields["exclude-old-transactions"] == .bool(true), now: now)) {
            first,
            _ in first
        }
        return answer
    }

    private static func receiptObject(
        _ receipt: ReadAppReceipt,
        purchases: [[String: JSONValue]],
        now: Int64
    )
        -> [String: JSONValue]
    {
        var object: [String: JSONValue] = [
            "receipt_type": .string(AppReceipt.receiptType(receipt.app.environment)),
            "adam_id": .number(String(receipt.app.appAppleId ?? 0)),
            "app_item_id": .number(String(receipt.app.appAppleId ?? 0)),
            "bundle_id": .string(receipt.app.bundleId),
            "application_version": .string(receipt.app.bundleVersion),
            "original_application_version": .string(receipt.originalApplicationVersion ?? ""),
            "in_app": .array(purchases.map(JSONValue.object)),
        ]
        object.merge(dates("request_date", now)) { first, _ in first }
        if let created = receipt.creationDate {
            object.merge(dates("receipt_creation_date", created)) { first, _ in first }
        }
        if let expiration = receipt.expirationDate {
            object.merge(dates("expiration_date", expiration)) { first, _ in first }
        }
        return object
    }

    /// One purchase as `in_app` and `latest_receipt_info` list it: every value a string, as Apple writes them.
    static func receiptPurchase(_ transaction: JWSTransactionDecodedPayload) -> [String: JSONValue] {
        var item: [String: JSONValue] = [
            "quantity": .string(String(transaction.quantity ?? 1)),
            "product_id": .string(transaction.productId ?? ""),
            "transaction_id": .string(transaction.transactionId ?? ""),
            "original_transaction_id": .string(transaction.originalTransactionId ?? transaction.transactionId ?? ""),
            "is_trial_period": .string(transaction.offerDiscountType == .freeTrial ? "true" : "false"),
            "in_app_ownership_type": .string(transaction.inAppOwnershipType?.rawValue ?? "PURCHASED"),
        ]
        let dated: [(String, Int64?)] = [
            ("purchase_date", transaction.purchaseDate), ("original_purchase_date", transaction.originalPurchaseDate),
            ("expires_date", transaction.expiresDate), ("cancellation_date", transaction.revocationDate),
        ]
        for case (let name, let value?) in dated { item.merge(dates(name, value)) { first, _ in first } }
        if transaction.expiresDate != nil {
            item["is_in_intro_offer_period"] = .string(transaction.offerType == .introductoryOffer ? "true" : "false")
        }
        if let webOrder = transaction.webOrderLineItemId { item["web_order_line_item_id"] = .string(webOrder) }
        if transaction.revocationDate != nil {
            item["cancellation_reason"] = .string(String(transaction.revocationReason?.rawValue ?? 0))
        }
        if let offer = transaction.offerIdentifier { item["promotional_offer_id"] = .string(offer) }
        return item
    }

    /// A date in verifyReceipt's three forms: `NAME` (`2026-01-01 00:00:00 Etc/GMT`), `NAME_ms` and `NAME_pst`.
    static func dates(_ name: String, _ milliseconds: Int64) -> [String: JSONValue] {
        [
            name: .string(ReceiptDateText.utc(milliseconds)),
            name + "_ms": .string(String(milliseconds)),
            name + "_pst": .string(ReceiptDateText.pacific(milliseconds)),
        ]
    }
}
