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
    let signer: ES256Signer
    let forgeries: ForgeryMaterial
    /// One encoder for every payload: creating one per call costs more than some payloads take to encode.
    let encoder = AppStoreJSON.encoder()

    /// One hour in milliseconds.
    public static let hourMilliseconds: Int64 = 3_600_000
    /// One day in milliseconds.
    public static let dayMilliseconds: Int64 = 86_400_000
    /// The subscription period ``impliedTransaction(by:productId:productType:appAccountToken:signedDate:)``
    /// uses: 30 days.
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

    // MARK: - Payloads (pure)

    /// A transaction as a kind reports it: `transaction` as given, with the app's identity, the signing date,
    /// the transaction reason unless it gives one, and what the kind adds (an offer, a revocation, an
    /// extension).
    /// - Parameters:
    ///   - transaction: the transaction's facts, for example from
    ///     ``impliedTransaction(by:productId:productType:appAccountToken:signedDate:)``.
    ///   - kind: the notification it goes into, or `nil` for a bare transaction.
    ///   - signedDate: the signing time, UNIX ms.
    /// - Returns: the payload, every date in milliseconds.
    public func transactionPayload(
        _ transaction: JWSTransactionDecodedPayload,
        kind: NotificationKind? = nil,
        signedDate: Int64
    ) -> JWSTransactionDecodedPayload {
        var payload = transaction
        complete(&payload, kind: kind, signedDate: signedDate)
        return payload
    }

    /// ``transactionPayload(_:kind:signedDate:)`` in place, so that minting completes a transaction it holds
    /// without copying it.
    func complete(_ payload: inout JWSTransactionDecodedPayload, kind: NotificationKind?, signedDate: Int64) {
        payload.bundleId = app.bundleId
        payload.signedDate = signedDate
        payload.environment = app.environment
        let renews =
            payload.type == .autoRenewableSubscription
            && payload.transactionId != payload.originalTransactionId
            && kind?.subtype != .resubscribe && kind?.subtype != .upgrade
        payload.transactionReason = payload.transactionReason ?? (renews ? .renewal : .purchase)
        guard let kind else { return }
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
    }

    /// The renewal info of an auto-renewable subscription as a kind reports it (auto-renew status, expiration
    /// intent, billing retry, grace period, price increase, pending downgrade...).
    /// - Parameters:
    ///   - transaction: the subscription's current transaction, as given to
    ///     ``transactionPayload(_:kind:signedDate:)``.
    ///   - autoRenewProductId: the product the subscription renews to, which the transaction does not say;
    ///     `nil` means its own product (and, for a downgrade, a `.lower` one).
    ///   - kind: the notification it goes into, or `nil` for an active subscription.
    ///   - signedDate: the signing time, UNIX ms.
    /// - Returns: the payload.
    public func renewalInfoPayload(
        _ transaction: JWSTransactionDecodedPayload,
        autoRenewProductId: String? = nil,
        kind: NotificationKind? = nil,
        signedDate: Int64
    ) -> JWSRenewalInfoDecodedPayload {
        var payload = JWSRenewalInfoDecodedPayload(
            originalTransactionId: transaction.originalTransactionId,
            autoRenewProductId: autoRenewProductId ?? transaction.productId,
            productId: transaction.productId,
            autoRenewStatus: .on,
            isInBillingRetryPeriod: false,
            signedDate: signedDate,
            environment: app.environment,
            recentSubscriptionStartDate: transaction.originalPurchaseDate,
            renewalDate: transaction.expiresDate,
            currency: transaction.currency,
            renewalPrice: transaction.price,
            appAccountToken: transaction.appAccountToken,
            appTransactionId: transaction.appTransactionId
        )
        guard let kind else { return payload }
        let lowerProduct = autoRenewProductId ?? transaction.productId.map { $0 + ".lower" }
        applyRenewalState(
            of: kind,
            transaction: transaction,
            lowerProduct: lowerProduct,
            signedDate: signedDate,
            to: &payload
        )
        if kind.notificationType == .offerRedeemed {
            payload.offerType = .promotionalOffer
            payload.offerIdentifier = "paystorm.promo"
            payload.offerDiscountType = .payAsYouGo
            payload.offerPeriod = "P1M"
        }
        return payload
    }

    /// What a kind of notification says of the renewal: billing retry and grace, the expiration intent, the
    /// renewal product and status, a price increase, an extension.
    private func applyRenewalState(
        of kind: NotificationKind,
        transaction: JWSTransactionDecodedPayload,
        lowerProduct: String?,
        signedDate: Int64,
        to payload: inout JWSRenewalInfoDecodedPayload
    ) {
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
            payload.renewalPrice = transaction.price.map { $0 + $0 / 5 }
        case (.refund, _), (.revoke, _):
            payload.autoRenewStatus = .off
        case (.renewalExtended, _):
            payload.renewalDate = transaction.expiresDate.map { $0 + 7 * Self.dayMilliseconds }
        default:
            break
        }
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
}
