public import AppStoreModel
internal import Foundation
internal import Profile
internal import Signing

/// Signing: bare transactions and renewal infos, and notifications with the nested JWS their kind carries.
extension Minter {
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
    ///   - transaction: the transaction's facts (see ``transactionPayload(_:kind:signedDate:)``); `nil` makes
    ///     one that agrees with `kind`.
    ///   - kind: the event the transaction describes (a refund adds the revocation fields...), or `nil`.
    ///   - signedDate: the signing time, UNIX ms; `nil` means now.
    ///   - forgery: a forged variant, or `nil` for a genuine one.
    /// - Returns: the JWS and the payload as signed.
    /// - Throws: `MintError` when the forgery does not apply to a bare transaction; signing errors.
    public func transaction(
        _ transaction: JWSTransactionDecodedPayload? = nil,
        kind: NotificationKind? = nil,
        signedDate: Int64? = nil,
        forgery: Forgery? = nil
    ) throws -> MintedJWS<JWSTransactionDecodedPayload> {
        try checkApplicable(forgery, to: .transaction)
        let forged = forgedContext(forgery, signedDate: signedDate ?? Self.nowMilliseconds())
        let facts = transaction ?? Self.impliedTransaction(by: kind, signedDate: forged.signedDate)
        var payload = forged.minter.transactionPayload(facts, kind: kind, signedDate: forged.signedDate)
        if forgery == .datesInSeconds { payload = payload.mappingDates(Self.toSeconds) }
        let jws = try signForged(payload, forgery: forgery) { tampered in
            tampered.quantity = (tampered.quantity ?? 1) * Int32(Faults.tamperedQuantityFactor)
            tampered.price = 0
        }
        return MintedJWS(jws: jws, payload: payload, forgery: forgery)
    }

    /// Mints a bare signed renewal info.
    /// - Parameters:
    ///   - transaction: the current transaction of an auto-renewable subscription; `nil` makes one.
    ///   - autoRenewProductId: the product the subscription renews to; `nil` means its own.
    ///   - kind: the event the renewal info describes, or `nil` for an active subscription.
    ///   - signedDate: the signing time, UNIX ms; `nil` means now.
    ///   - forgery: a forged variant, or `nil`.
    /// - Returns: the JWS and the payload as signed.
    /// - Throws: `MintError` when the forgery does not apply; signing errors.
    public func renewalInfo(
        _ transaction: JWSTransactionDecodedPayload? = nil,
        autoRenewProductId: String? = nil,
        kind: NotificationKind? = nil,
        signedDate: Int64? = nil,
        forgery: Forgery? = nil
    ) throws -> MintedJWS<JWSRenewalInfoDecodedPayload> {
        try checkApplicable(forgery, to: .renewalInfo)
        let forged = forgedContext(forgery, signedDate: signedDate ?? Self.nowMilliseconds())
        let facts =
            transaction
            ?? Self.impliedTransaction(by: kind, productType: .autoRenewableSubscription, signedDate: forged.signedDate)
        var payload = forged.minter.renewalInfoPayload(
            facts,
            autoRenewProductId: autoRenewProductId,
            kind: kind,
            signedDate: forged.signedDate
        )
        if forgery == .datesInSeconds { payload = payload.mappingDates(Self.toSeconds) }
        let jws = try signForged(payload, forgery: forgery) { tampered in
            // Flip auto-renew: a change the signature must catch whatever the original said.
            tampered.autoRenewStatus = tampered.autoRenewStatus == .on ? .off : .on
        }
        return MintedJWS(jws: jws, payload: payload, forgery: forgery)
    }

    /// Mints a notification of a kind, with the nested signed transaction, renewal info or app transaction
    /// its kind carries, all describing the same transaction.
    ///
    /// Payload forgeries (`wrong-bundle`, `wrong-environment`, `signed-date-before-chain`,
    /// `dates-in-seconds`) apply to every signed object of the notification, since it tells one story;
    /// signature and chain forgeries apply to the outer `signedPayload` only, and
    /// `forged-inner-transaction` only to the nested transaction.
    /// - Parameters:
    ///   - kind: the notification type and subtype (any row of `NotificationMatrix`, or an unknown pair).
    ///   - transaction: the transaction's facts (see ``transactionPayload(_:kind:signedDate:)``); `nil` makes
    ///     one that agrees with `kind`.
    ///   - autoRenewProductId: the product an auto-renewable subscription renews to; `nil` means its own.
    ///   - signedDate: the signing time, UNIX ms; `nil` means now.
    ///   - notificationUUID: the notification's UUID; `nil` makes a fresh one. Reuse one to mint a retry.
    ///   - forgery: a forged variant, or `nil`.
    /// - Returns: the signed payload, the webhook body and every payload as signed.
    /// - Throws: `MintError` when the product type contradicts the kind or the forgery does not apply.
    public func notification(
        _ kind: NotificationKind,
        transaction: JWSTransactionDecodedPayload? = nil,
        autoRenewProductId: String? = nil,
        signedDate: Int64? = nil,
        notificationUUID: String? = nil,
        forgery: Forgery? = nil
    ) throws -> MintedNotification {
        try checkApplicable(forgery, to: .notification)
        let date = forgedDate(forgery, signedDate: signedDate ?? Self.nowMilliseconds())
        // Only a forged app needs another minter: copying this one costs a retain per reference it holds.
        if forgedApp(forgery) != app {
            return try forgedContext(forgery, signedDate: date).minter.mint(
                kind,
                transaction: transaction,
                autoRenewProductId: autoRenewProductId,
                signedDate: date,
                notificationUUID: notificationUUID,
                forgery: forgery
            )
        }
        return try mint(
            kind,
            transaction: transaction,
            autoRenewProductId: autoRenewProductId,
            signedDate: date,
            notificationUUID: notificationUUID,
            forgery: forgery
        )
    }

    /// ``notification(_:transaction:autoRenewProductId:signedDate:notificationUUID:forgery:)`` by this minter,
    /// at its signing date. The payloads are built in the result itself: a transaction payload holds about twenty
    /// Strings, and each copy of one (a returned tuple, an `if let`) retained and released every one of them.
    private func mint(
        _ kind: NotificationKind,
        transaction: JWSTransactionDecodedPayload?,
        autoRenewProductId: String?,
        signedDate date: Int64,
        notificationUUID: String?,
        forgery: Forgery?
    ) throws -> MintedNotification {
        var minted = MintedNotification(
            kind: kind,
            signedPayload: "",
            payload: ResponseBodyV2DecodedPayload(
                notificationType: kind.notificationType,
                subtype: kind.subtype,
                notificationUUID: notificationUUID ?? Self.randomUUID(),
                version: "2.0",
                signedDate: date
            ),
            forgery: forgery
        )
        try addContent(
            of: kind,
            transaction: transaction,
            autoRenewProductId: autoRenewProductId,
            signedDate: date,
            to: &minted
        )
        if forgery == .datesInSeconds { minted.payload.signedDate = minted.payload.signedDate.map(Self.toSeconds) }
        minted.signedPayload = try signOuter(
            &minted.payload,
            transaction: minted.transaction,
            renewal: minted.renewalInfo,
            forgery: forgery,
            keepNested: true
        )
        return minted
    }

    /// Fills in what a kind of notification carries (its `data`, `summary`, `externalPurchaseToken` or
    /// `appData`), and the nested payloads to sign into it.
    private func addContent(
        of kind: NotificationKind,
        transaction: JWSTransactionDecodedPayload?,
        autoRenewProductId: String?,
        signedDate date: Int64,
        to minted: inout MintedNotification
    ) throws {
        let forgery = minted.forgery
        switch kind.content {
        case .appIdentity:
            minted.payload.data = NotificationData(
                appAppleId: app.appAppleId,
                bundleId: app.bundleId,
                environment: app.environment
            )
        case .summary:
            minted.payload.summary = Summary(
                environment: app.environment,
                appAppleId: app.appAppleId,
                bundleId: app.bundleId,
                productId: transaction?.productId ?? "com.example.paystorm.monthly",
                requestIdentifier: Self.randomUUID(),
                storefrontCountryCodes: ["USA"],
                succeededCount: 1,
                failedCount: 0
            )
        case .externalPurchaseToken:
            // The token has no environment field: verifiers read "SANDBOX" off the front of its ID.
            minted.payload.externalPurchaseToken = ExternalPurchaseToken(
                externalPurchaseId: (app.environment == .sandbox ? "SANDBOX_" : "") + Self.randomUUID(),
                tokenCreationDate: date - Self.dayMilliseconds,
                appAppleId: app.appAppleId,
                bundleId: app.bundleId
            )
        case .appData:
            var signed = appTransactionPayload(signedDate: date)
            if forgery == .datesInSeconds { signed = signed.mappingDates(Self.toSeconds) }
            minted.payload.appData = AppData(
                appAppleId: app.appAppleId,
                bundleId: app.bundleId,
                environment: app.environment,
                signedAppTransactionInfo: try sign(signed)
            )
            minted.appTransaction = signed
        case .subscription, .transaction, .oneTimeTransaction:
            try addPurchaseData(
                kind,
                transaction: transaction,
                autoRenewProductId: autoRenewProductId,
                signedDate: date,
                to: &minted
            )
        }
    }

    /// The `data` of a notification that carries a transaction, and the nested payloads to sign into it, set in
    /// `minted`.
    private func addPurchaseData(
        _ kind: NotificationKind,
        transaction given: JWSTransactionDecodedPayload?,
        autoRenewProductId: String?,
        signedDate date: Int64,
        to minted: inout MintedNotification
    ) throws {
        let forgery = minted.forgery
        var transaction = given ?? Self.impliedTransaction(by: kind, signedDate: date)
        if let type = transaction.type { try Self.checkProductType(type, for: kind) }
        var data = NotificationData(
            appAppleId: app.appAppleId,
            bundleId: app.bundleId,
            bundleVersion: app.bundleVersion,
            environment: app.environment
        )
        if transaction.type == .autoRenewableSubscription {
            // From the transaction's facts, before the kind completes them (a renewal extension moves its expiry).
            var info = renewalInfoPayload(
                transaction,
                autoRenewProductId: autoRenewProductId,
                kind: kind,
                signedDate: date
            )
            if forgery == .datesInSeconds { info = info.mappingDates(Self.toSeconds) }
            minted.renewalInfo = info
            data.status = Self.status(for: kind)
        }
        complete(&transaction, kind: kind, signedDate: date)
        if forgery == .datesInSeconds { transaction = transaction.mappingDates(Self.toSeconds) }
        if kind.notificationType == .consumptionRequest {
            data.consumptionRequestReason = .unintendedPurchase
        }
        minted.payload.data = data
        minted.transaction = transaction
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
        body.append(contentsOf: webhookSuffix)
        return body
    }

    static let webhookPrefix = Array("{\"signedPayload\":\"".utf8)
    static let webhookSuffix = Array("\"}".utf8)
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
