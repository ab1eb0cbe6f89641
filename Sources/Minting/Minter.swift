public import AppStoreModel
internal import Foundation
public import Signing

/// Mints App Store signed data with PayStorm's test PKI: signed transactions, renewal infos, app
/// transactions and App Store Server Notifications V2 of every kind in `NotificationMatrix`, with the
/// nested JWS a notification carries, each payload consistent with its kind (reference §4 and §5), and
/// forged variants of each (`Forgery`).
///
/// Apple's `SignedDataVerifier` accepts what `Minter` mints when it trusts the PKI's root.
///
/// ```swift
/// let minter = Minter(pki: try TestPKI.load(from: "pki"))
/// let minted = try minter.notification(NotificationMatrix.kind(.subscribed, .initialBuy)!)
/// // POST minted.body to the backend's webhook: {"signedPayload":"..."}
/// let forged = try minter.notification(.init(.didRenew, nil, .subscription), forgery: .untrustedRoot)
/// ```
public struct Minter: Sendable {
    /// The PKI whose leaf signs and whose root the backend trusts.
    public let pki: TestPKI
    /// The app written into every payload.
    public var app: AppIdentity
    private let signer: ES256Signer
    let forgeries: ForgeryMaterial
    /// One encoder for every payload: creating one per call costs more than some payloads take to encode.
    let encoder = AppStoreJSON.encoder()

    /// One hour in milliseconds.
    public static let hourMilliseconds: Int64 = 3_600_000
    /// One day in milliseconds.
    public static let dayMilliseconds: Int64 = 86_400_000
    /// The subscription period `Purchase(kind:...)` uses: 30 days.
    public static let defaultPeriodMilliseconds: Int64 = 30 * dayMilliseconds

    /// Creates a minter.
    /// - Parameters:
    ///   - pki: the PKI whose leaf signs.
    ///   - app: the app written into every payload.
    public init(pki: TestPKI, app: AppIdentity = AppIdentity()) {
        self.pki = pki
        self.app = app
        self.signer = ES256Signer(pki: pki)
        self.forgeries = ForgeryMaterial(pki: pki)
    }

    // MARK: - Helpers shared with `Purchase`

    /// The product type a kind implies when none is given: an auto-renewable subscription for
    /// subscription events, a consumable for refunds, consumption requests and one-time charges, a
    /// non-consumable for Family Sharing revocations.
    public static func defaultProductType(for kind: NotificationKind?) -> ProductType {
        guard let kind else { return .autoRenewableSubscription }
        switch kind.content {
        case .oneTimeTransaction: return .consumable
        case .transaction: return kind.notificationType == .revoke ? .nonConsumable : .consumable
        default: return .autoRenewableSubscription
        }
    }

    /// A plausible price in milliunits for a product type.
    public static func defaultPrice(for type: ProductType) -> Int64 {
        switch type {
        case .autoRenewableSubscription: return 9990
        case .consumable: return 990
        case .nonRenewingSubscription: return 19990
        default: return 4990
        }
    }

    /// The subscription status (`data.status`) a kind reports as of its `signedDate`.
    public static func status(for kind: NotificationKind) -> Status {
        switch kind.notificationType {
        case .didFailToRenew: return kind.subtype == .gracePeriod ? .billingGracePeriod : .billingRetry
        case .gracePeriodExpired: return .billingRetry
        case .expired: return .expired
        case .refund, .revoke: return .revoked
        default: return .active
        }
    }

    // MARK: - Payloads (pure)

    /// The transaction payload of a purchase as a kind reports it.
    /// - Parameters:
    ///   - purchase: the purchase.
    ///   - kind: the notification it goes into, or `nil` for a bare transaction.
    ///   - signedDate: the signing time, UNIX ms.
    /// - Returns: the payload, every date in milliseconds.
    public func transactionPayload(
        _ purchase: Purchase,
        kind: NotificationKind? = nil,
        signedDate: Int64
    ) -> JWSTransactionDecodedPayload {
        let isSubscription = purchase.productType == .autoRenewableSubscription
        var payload = JWSTransactionDecodedPayload(
            originalTransactionId: purchase.originalTransactionId,
            transactionId: purchase.transactionId,
            webOrderLineItemId: purchase.webOrderLineItemId,
            bundleId: app.bundleId,
            productId: purchase.productId,
            subscriptionGroupIdentifier: purchase.subscriptionGroupIdentifier,
            purchaseDate: purchase.purchaseDate,
            originalPurchaseDate: purchase.originalPurchaseDate,
            expiresDate: isSubscription ? purchase.expiresDate : nil,
            quantity: purchase.quantity,
            type: purchase.productType,
            appAccountToken: purchase.appAccountToken,
            inAppOwnershipType: purchase.inAppOwnershipType,
            signedDate: signedDate,
            environment: app.environment,
            storefront: purchase.storefront,
            storefrontId: purchase.storefrontId,
            transactionReason: isSubscription && purchase.transactionId != purchase.originalTransactionId
                && kind?.subtype != .resubscribe && kind?.subtype != .upgrade ? .renewal : .purchase,
            currency: purchase.currency,
            price: purchase.price,
            appTransactionId: purchase.appTransactionId
        )
        guard let kind else { return payload }
        switch kind.notificationType {
        case .offerRedeemed:
            payload.offerType = .promotionalOffer
            payload.offerIdentifier = "paystorm.promo"
            payload.offerDiscountType = .payAsYouGo
            payload.offerPeriod = "P1M"
        case .refund:
            payload.revocationDate = signedDate - 1000
            payload.revocationReason = .refundedDueToIssue
            payload.revocationType = .refundFull
            payload.revocationPercentage = 100_000
        case .revoke:
            payload.revocationDate = signedDate - 1000
            payload.revocationReason = .refundedForOtherReason
            payload.revocationType = .familyRevoke
            payload.inAppOwnershipType = .familyShared
        case .renewalExtended:
            payload.expiresDate = payload.expiresDate.map { $0 + 7 * Self.dayMilliseconds }
        default:
            break
        }
        return payload
    }

    /// The renewal info of an auto-renewable purchase as a kind reports it (auto-renew status, expiration
    /// intent, billing retry, grace period, price increase, pending downgrade...).
    /// - Parameters:
    ///   - purchase: the purchase.
    ///   - kind: the notification it goes into, or `nil` for an active subscription.
    ///   - signedDate: the signing time, UNIX ms.
    /// - Returns: the payload.
    public func renewalInfoPayload(
        _ purchase: Purchase,
        kind: NotificationKind? = nil,
        signedDate: Int64
    ) -> JWSRenewalInfoDecodedPayload {
        var payload = JWSRenewalInfoDecodedPayload(
            originalTransactionId: purchase.originalTransactionId,
            autoRenewProductId: purchase.autoRenewProductId ?? purchase.productId,
            productId: purchase.productId,
            autoRenewStatus: .on,
            isInBillingRetryPeriod: false,
            signedDate: signedDate,
            environment: app.environment,
            recentSubscriptionStartDate: purchase.originalPurchaseDate,
            renewalDate: purchase.expiresDate,
            currency: purchase.currency,
            renewalPrice: purchase.price,
            appAccountToken: purchase.appAccountToken,
            appTransactionId: purchase.appTransactionId
        )
        guard let kind else { return payload }
        let lowerProduct = purchase.autoRenewProductId ?? purchase.productId + ".lower"
        switch (kind.notificationType, kind.subtype) {
        case (.didFailToRenew, let subtype):
            payload.isInBillingRetryPeriod = true
            payload.expirationIntent = .billingError
            if subtype == .gracePeriod {
                payload.gracePeriodExpiresDate = signedDate + 6 * Self.dayMilliseconds
            }
        case (.gracePeriodExpired, _):
            payload.isInBillingRetryPeriod = true
            payload.expirationIntent = .billingError
            payload.gracePeriodExpiresDate = signedDate - 1000
        case (.expired, let subtype):
            payload.autoRenewStatus = .off
            payload.renewalDate = nil
            switch subtype {
            case .voluntary?: payload.expirationIntent = .customerCancelled
            case .billingRetry?: payload.expirationIntent = .billingError
            case .priceIncrease?:
                payload.expirationIntent = .customerDidNotConsentToPriceIncrease
                payload.priceIncreaseStatus = .customerHasNotResponded
            case .productNotForSale?: payload.expirationIntent = .productNotAvailable
            default: payload.expirationIntent = .other
            }
        case (.didChangeRenewalPref, .downgrade?), (.offerRedeemed, .downgrade?):
            payload.autoRenewProductId = lowerProduct
        case (.didChangeRenewalStatus, .autoRenewEnabled?):
            payload.autoRenewStatus = .on
        case (.didChangeRenewalStatus, _):
            payload.autoRenewStatus = .off
        case (.priceIncrease, let subtype):
            payload.priceIncreaseStatus =
                subtype == .pending ? .customerHasNotResponded : .customerConsentedOrWasNotifiedWithoutNeedingConsent
            payload.renewalPrice = purchase.price + purchase.price / 5
        case (.refund, _), (.revoke, _):
            payload.autoRenewStatus = .off
        case (.renewalExtended, _):
            payload.renewalDate = purchase.expiresDate.map { $0 + 7 * Self.dayMilliseconds }
        default:
            break
        }
        if kind.notificationType == .offerRedeemed {
            payload.offerType = .promotionalOffer
            payload.offerIdentifier = "paystorm.promo"
            payload.offerDiscountType = .payAsYouGo
            payload.offerPeriod = "P1M"
        }
        return payload
    }

    /// The app transaction a `RESCIND_CONSENT` notification carries; `receiptCreationDate` is `signedDate`.
    /// - Parameter signedDate: the signing time, UNIX ms.
    /// - Returns: the payload.
    public func appTransactionPayload(signedDate: Int64) -> AppTransaction {
        AppTransaction(
            receiptType: app.environment,
            appAppleId: app.appAppleId,
            bundleId: app.bundleId,
            applicationVersion: app.bundleVersion,
            receiptCreationDate: signedDate,
            originalPurchaseDate: signedDate - Self.defaultPeriodMilliseconds,
            originalApplicationVersion: "1.0",
            appTransactionId: Self.randomTransactionId(),
            originalPlatform: .iOS
        )
    }

    // MARK: - Signing

    /// Signs any payload with the leaf key: ES256, `x5c` = [leaf, intermediate, root].
    /// - Parameter payload: the payload; App Store payloads go through the fast `AppStoreJSON.encode(_:)`,
    ///   anything else through `AppStoreJSON.encoder()` (the bytes are the same).
    /// - Returns: the JWS in compact form.
    /// - Throws: an encoding or signing error.
    public func sign(_ payload: some Encodable) throws -> String {
        if let writable = payload as? any AppStoreJSONWritable {
            return try signer.sign(payload: AppStoreJSON.encode(writable))
        }
        return try signer.sign(payload: Array(try encoder.encode(payload)))
    }

    /// Mints a bare signed transaction, as a device posts it.
    /// - Parameters:
    ///   - purchase: the purchase; `nil` makes one that agrees with `kind`.
    ///   - kind: the event the transaction describes (a refund adds the revocation fields...), or `nil`.
    ///   - signedDate: the signing time, UNIX ms; `nil` means now.
    ///   - forgery: a forged variant, or `nil` for a genuine one.
    /// - Returns: the JWS and the payload as signed.
    /// - Throws: `MintError` when the forgery does not apply to a bare transaction; signing errors.
    public func transaction(
        _ purchase: Purchase? = nil,
        kind: NotificationKind? = nil,
        signedDate: Int64? = nil,
        forgery: Forgery? = nil
    ) throws -> MintedJWS<JWSTransactionDecodedPayload> {
        try checkApplicable(forgery, to: .transaction)
        let forged = forgedContext(forgery, signedDate: signedDate ?? Self.nowMilliseconds())
        let purchase = purchase ?? Purchase(kind: kind, signedDate: forged.signedDate)
        var payload = forged.minter.transactionPayload(purchase, kind: kind, signedDate: forged.signedDate)
        if forgery == .datesInSeconds { payload = payload.mappingDates(Self.toSeconds) }
        let jws = try signForged(payload, forgery: forgery) { tampered in
            tampered.quantity = (tampered.quantity ?? 1) * 10
            tampered.price = 0
        }
        return MintedJWS(jws: jws, payload: payload, forgery: forgery)
    }

    /// Mints a bare signed renewal info.
    /// - Parameters:
    ///   - purchase: an auto-renewable purchase; `nil` makes one.
    ///   - kind: the event the renewal info describes, or `nil` for an active subscription.
    ///   - signedDate: the signing time, UNIX ms; `nil` means now.
    ///   - forgery: a forged variant, or `nil`.
    /// - Returns: the JWS and the payload as signed.
    /// - Throws: `MintError` when the forgery does not apply; signing errors.
    public func renewalInfo(
        _ purchase: Purchase? = nil,
        kind: NotificationKind? = nil,
        signedDate: Int64? = nil,
        forgery: Forgery? = nil
    ) throws -> MintedJWS<JWSRenewalInfoDecodedPayload> {
        try checkApplicable(forgery, to: .renewalInfo)
        let forged = forgedContext(forgery, signedDate: signedDate ?? Self.nowMilliseconds())
        let purchase =
            purchase ?? Purchase(kind: kind, productType: .autoRenewableSubscription, signedDate: forged.signedDate)
        var payload = forged.minter.renewalInfoPayload(purchase, kind: kind, signedDate: forged.signedDate)
        if forgery == .datesInSeconds { payload = payload.mappingDates(Self.toSeconds) }
        let jws = try signForged(payload, forgery: forgery) { tampered in
            // Flip auto-renew: a change the signature must catch whatever the original said.
            tampered.autoRenewStatus = tampered.autoRenewStatus == .on ? .off : .on
        }
        return MintedJWS(jws: jws, payload: payload, forgery: forgery)
    }

    /// Mints a notification of a kind, with the nested signed transaction, renewal info or app transaction
    /// its kind carries, all describing the same purchase.
    ///
    /// Payload forgeries (`wrong-bundle`, `wrong-environment`, `signed-date-before-chain`,
    /// `dates-in-seconds`) apply to every signed object of the notification, since it tells one story;
    /// signature and chain forgeries apply to the outer `signedPayload` only, and
    /// `forged-inner-transaction` only to the nested transaction.
    /// - Parameters:
    ///   - kind: the notification type and subtype (any row of `NotificationMatrix`, or an unknown pair).
    ///   - purchase: the purchase; `nil` makes one that agrees with `kind`.
    ///   - signedDate: the signing time, UNIX ms; `nil` means now.
    ///   - notificationUUID: the notification's UUID; `nil` makes a fresh one. Reuse one to mint a retry.
    ///   - forgery: a forged variant, or `nil`.
    /// - Returns: the signed payload, the webhook body and every payload as signed.
    /// - Throws: `MintError` when the product type contradicts the kind or the forgery does not apply.
    public func notification(
        _ kind: NotificationKind,
        purchase: Purchase? = nil,
        signedDate: Int64? = nil,
        notificationUUID: String? = nil,
        forgery: Forgery? = nil
    ) throws -> MintedNotification {
        try checkApplicable(forgery, to: .notification)
        let forged = forgedContext(forgery, signedDate: signedDate ?? Self.nowMilliseconds())
        let minter = forged.minter
        let date = forged.signedDate
        var result = MintedNotification(
            kind: kind,
            signedPayload: "",
            payload: ResponseBodyV2DecodedPayload(),
            forgery: forgery
        )
        var payload = ResponseBodyV2DecodedPayload(
            notificationType: kind.notificationType,
            subtype: kind.subtype,
            notificationUUID: notificationUUID ?? Self.randomUUID(),
            version: "2.0",
            signedDate: date
        )
        let app = minter.app
        switch kind.content {
        case .appIdentity:
            payload.data = NotificationData(
                appAppleId: app.appAppleId,
                bundleId: app.bundleId,
                environment: app.environment
            )
        case .summary:
            payload.summary = Summary(
                environment: app.environment,
                appAppleId: app.appAppleId,
                bundleId: app.bundleId,
                productId: purchase?.productId ?? "com.example.paystorm.monthly",
                requestIdentifier: Self.randomUUID(),
                storefrontCountryCodes: ["USA"],
                succeededCount: 1,
                failedCount: 0
            )
        case .externalPurchaseToken:
            // The token has no environment field: verifiers read "SANDBOX" off the front of its ID.
            payload.externalPurchaseToken = ExternalPurchaseToken(
                externalPurchaseId: (app.environment == .sandbox ? "SANDBOX_" : "") + Self.randomUUID(),
                tokenCreationDate: date - Self.dayMilliseconds,
                appAppleId: app.appAppleId,
                bundleId: app.bundleId
            )
        case .appData:
            var appTransaction = minter.appTransactionPayload(signedDate: date)
            if forgery == .datesInSeconds { appTransaction = appTransaction.mappingDates(Self.toSeconds) }
            payload.appData = AppData(
                appAppleId: app.appAppleId,
                bundleId: app.bundleId,
                environment: app.environment,
                signedAppTransactionInfo: try sign(appTransaction)
            )
            result.appTransaction = appTransaction
        case .subscription, .transaction, .oneTimeTransaction:
            let purchase = purchase ?? Purchase(kind: kind, signedDate: date)
            try Self.checkProductType(purchase.productType, for: kind)
            var transaction = minter.transactionPayload(purchase, kind: kind, signedDate: date)
            if forgery == .datesInSeconds { transaction = transaction.mappingDates(Self.toSeconds) }
            var data = NotificationData(
                appAppleId: app.appAppleId,
                bundleId: app.bundleId,
                bundleVersion: app.bundleVersion,
                environment: app.environment
            )
            data.signedTransactionInfo = try signNested(transaction, forgery: forgery)
            result.transaction = transaction
            if purchase.productType == .autoRenewableSubscription {
                var renewal = minter.renewalInfoPayload(purchase, kind: kind, signedDate: date)
                if forgery == .datesInSeconds { renewal = renewal.mappingDates(Self.toSeconds) }
                data.signedRenewalInfo = try sign(renewal)
                data.status = Self.status(for: kind)
                result.renewalInfo = renewal
            }
            if kind.notificationType == .consumptionRequest {
                data.consumptionRequestReason = .unintendedPurchase
            }
            payload.data = data
        }
        if forgery == .datesInSeconds { payload.signedDate = payload.signedDate.map(Self.toSeconds) }
        result.payload = payload
        result.signedPayload = try signForged(payload, forgery: forgery) { tampered in
            // A replay that dodges deduplication by notificationUUID.
            tampered.notificationUUID = Self.randomUUID()
        }
        return result
    }

    /// Signs a notification's nested transaction: with an untrusted chain for `forged-inner-transaction`
    /// (the outer payload stays genuine), genuinely otherwise.
    func signNested(_ transaction: JWSTransactionDecodedPayload, forgery: Forgery?) throws -> String {
        guard forgery == .forgedInnerTransaction else { return try sign(transaction) }
        let untrusted = try forgeries.pki(for: .untrustedRoot)
        return try ES256Signer(pki: untrusted).sign(payload: AppStoreJSON.encode(transaction))
    }

    /// The webhook body Apple POSTs: `{"signedPayload":"<JWS>"}`.
    /// - Parameter signedPayload: the notification JWS (base64url and dots, so nothing needs escaping).
    /// - Returns: the body bytes.
    public static func webhookBody(_ signedPayload: String) -> [UInt8] {
        // One buffer of the final size: interpolating a 20 KB string and copying it out costs two passes more.
        var body: [UInt8] = []
        body.reserveCapacity(signedPayload.utf8.count + webhookPrefix.count + 2)
        body.append(contentsOf: webhookPrefix)
        body.append(contentsOf: signedPayload.utf8)
        body.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: "}")])
        return body
    }

    private static let webhookPrefix = Array("{\"signedPayload\":\"".utf8)

    // MARK: - Forgery mechanics

    static func toSeconds(_ milliseconds: Int64) -> Int64 { milliseconds / 1000 }

    static func checkProductType(_ type: ProductType, for kind: NotificationKind) throws {
        switch kind.content {
        case .subscription where type != .autoRenewableSubscription:
            throw MintError("\(kind) describes an auto-renewable subscription, not a product of type '\(type)'")
        case .oneTimeTransaction where type == .autoRenewableSubscription:
            throw MintError("\(kind) never describes an auto-renewable subscription")
        default:
            break
        }
    }

    private func checkApplicable(_ forgery: Forgery?, to object: SignedObjectKind) throws {
        guard let forgery else { return }
        guard forgery.isKnown else {
            throw MintError(
                "unknown forgery '\(forgery)'; known: \(Forgery.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        if forgery == .forgedInnerTransaction && object != .notification {
            throw MintError("forgery '\(forgery)' applies only to notifications that carry a transaction")
        }
    }

    /// The minter and signing date a payload forgery implies.
    func forgedContext(_ forgery: Forgery?, signedDate: Int64) -> (minter: Minter, signedDate: Int64) {
        var minter = self
        var date = signedDate
        switch forgery {
        case .wrongBundle?:
            minter.app.bundleId = app.bundleId + ".forged"
        case .wrongEnvironment?:
            minter.app.environment = app.environment == .production ? .sandbox : .production
        case .signedDateBeforeChain?:
            let start = [pki.root, pki.intermediate, pki.leaf].map(\.notBefore).min() ?? Date()
            date = Int64(start.timeIntervalSince1970 * 1000) - Self.dayMilliseconds
        default:
            break
        }
        return (minter, date)
    }

    /// Signs a payload the way a forgery says: with a foreign key, a wrong header or chain, another PKI,
    /// or genuinely and then tampered with.
    func signForged<Payload: AppStoreJSONWritable>(
        _ payload: Payload,
        forgery: Forgery?,
        tamper: (inout Payload) -> Void
    ) throws -> String {
        let bytes = AppStoreJSON.encode(payload)
        let chain = [pki.leaf, pki.intermediate, pki.root]
        switch forgery {
        case .badSignature?:
            return try JWS.sign(
                payload: bytes,
                header: JWSHeader(alg: "ES256", x5c: JWS.x5c(chain)),
                key: forgeries.foreignKey()
            )
        case .algES384?:
            return try JWS.sign(payload: bytes, header: JWSHeader(alg: "ES384", x5c: JWS.x5c(chain)), key: pki.leafKey)
        case .algNone?:
            let header = Array(try encoder.encode(JWSHeader(alg: "none", x5c: JWS.x5c(chain))))
            return JWS.base64URL(header) + "." + JWS.base64URL(bytes) + "."
        case .chain2?:
            return try JWS.sign(
                payload: bytes,
                header: JWSHeader(alg: "ES256", x5c: JWS.x5c(Array(chain.prefix(2)))),
                key: pki.leafKey
            )
        case .chain4?:
            return try JWS.sign(
                payload: bytes,
                header: JWSHeader(alg: "ES256", x5c: JWS.x5c(chain + [pki.root])),
                key: pki.leafKey
            )
        case .base64URLX5C?:
            let x5c = chain.map { JWS.base64URL($0.der) }
            return try JWS.sign(payload: bytes, header: JWSHeader(alg: "ES256", x5c: x5c), key: pki.leafKey)
        case .missingLeafOID?, .missingIntermediateOID?, .criticalOIDs?, .untrustedRoot?:
            return try ES256Signer(pki: try forgeries.pki(for: forgery!)).sign(payload: bytes)
        case .tamperedPayload?:
            let genuine = try signer.sign(payload: bytes)
            var tampered = payload
            tamper(&tampered)
            let parts = genuine.split(separator: ".", omittingEmptySubsequences: false)
            let body = JWS.base64URL(AppStoreJSON.encode(tampered))
            return "\(parts[0]).\(body).\(parts[2])"
        default:
            return try signer.sign(payload: bytes)
        }
    }
}

/// A signed object and its payload as signed.
public struct MintedJWS<Payload: Sendable & Hashable>: Sendable, Hashable {
    /// The JWS in compact form.
    public var jws: String
    /// The payload as signed (a `tampered-payload` forgery changes the JWS after signing, not this).
    public var payload: Payload
    /// The forgery applied, or `nil` for genuine data.
    public var forgery: Forgery?
}

/// A minted notification: the signed payload, the webhook body, and every payload as signed.
public struct MintedNotification: Sendable, Hashable {
    /// The notification kind.
    public var kind: NotificationKind
    /// The notification JWS.
    public var signedPayload: String
    /// The outer payload as signed.
    public var payload: ResponseBodyV2DecodedPayload
    /// The nested transaction, when the kind carries one.
    public var transaction: JWSTransactionDecodedPayload?
    /// The nested renewal info, for auto-renewable subscriptions.
    public var renewalInfo: JWSRenewalInfoDecodedPayload?
    /// The nested app transaction, for `RESCIND_CONSENT`.
    public var appTransaction: AppTransaction?
    /// The forgery applied, or `nil` for genuine data.
    public var forgery: Forgery?

    /// The webhook body: `{"signedPayload":"<JWS>"}`.
    public var body: [UInt8] { Minter.webhookBody(signedPayload) }
}

/// Why a mint request cannot be honoured (a product type that contradicts the kind, a forgery that does
/// not apply); the message names the problem in one line.
public struct MintError: Error, CustomStringConvertible, Sendable, Hashable {
    /// One line naming the problem.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
