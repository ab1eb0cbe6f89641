public import AppStoreModel
internal import Foundation
import Signing

/// Signing payloads built elsewhere (the simulation builds every field itself), with the same forgery
/// mechanics as the kind-driven minting: payload forgeries rewrite the payloads before signing, signature
/// and chain forgeries apply to the outermost object.
extension Minter {
    /// Signs a transaction as a device posts it.
    /// - Parameters:
    ///   - payload: the transaction, every field already set.
    ///   - forgery: a forged variant, or nil for a genuine one.
    /// - Returns: the JWS.
    /// - Throws: `MintError` for a forgery that does not apply to a bare transaction; signing errors.
    public func signTransaction(_ payload: JWSTransactionDecodedPayload, forgery: Forgery? = nil) throws -> String {
        if forgery == .forgedInnerTransaction {
            throw MintError("forgery '\(Forgery.forgedInnerTransaction)' applies only to notifications")
        }
        var transaction = payload
        rewrite(&transaction, forgery: forgery)
        return try signForged(transaction, forgery: forgery) { tampered in
            tampered.quantity = (tampered.quantity ?? 1) * 10
            tampered.price = 0
        }
    }

    /// Signs a notification whose nested transaction and renewal info are given as payloads.
    ///
    /// The app's identity in `data` is completed from ``app`` where the payload leaves it out, as Apple
    /// always sends it: `appAppleId`, and `bundleVersion` when the notification carries a transaction. A payload
    /// with a `summary` (`RENEWAL_EXTENSION`/`SUMMARY`) is signed with it and without `data`.
    /// - Parameters:
    ///   - payload: the notification; its `data.signedTransactionInfo` and `data.signedRenewalInfo` are
    ///     replaced by the signed `transaction` and `renewal`.
    ///   - transaction: the nested transaction, if the notification carries one.
    ///   - renewal: the nested renewal info, if it carries one.
    ///   - forgery: a forged variant, or nil.
    /// - Returns: the `signedPayload` JWS.
    /// - Throws: signing errors.
    public func signNotification(
        _ payload: ResponseBodyV2DecodedPayload,
        transaction: JWSTransactionDecodedPayload?,
        renewal: JWSRenewalInfoDecodedPayload?,
        forgery: Forgery? = nil
    ) throws -> String {
        var (outer, nestedTransaction, nestedRenewal) = prepared(
            payload,
            transaction: transaction,
            renewal: renewal,
            forgery: forgery
        )
        return try signOuter(
            &outer,
            transaction: nestedTransaction,
            renewal: nestedRenewal,
            forgery: forgery,
            keepNested: false
        )
    }

    /// The webhook body Apple POSTs, `{"signedPayload":"<JWS>"}`, for the notification that
    /// ``signNotification(_:transaction:renewal:forgery:)`` signs: the JWS is written straight into the body
    /// (a 13 KB JWS is not made a String to be copied back into bytes).
    /// - Parameters:
    ///   - payload: the notification, as for ``signNotification(_:transaction:renewal:forgery:)``.
    ///   - transaction: the nested transaction, if the notification carries one.
    ///   - renewal: the nested renewal info, if it carries one.
    ///   - forgery: a forged variant, or nil.
    /// - Returns: the body bytes, the same as ``webhookBody(_:)`` of the signed payload.
    /// - Throws: signing errors.
    public func notificationBody(
        _ payload: ResponseBodyV2DecodedPayload,
        transaction: JWSTransactionDecodedPayload?,
        renewal: JWSRenewalInfoDecodedPayload?,
        forgery: Forgery? = nil
    ) throws -> [UInt8] {
        var (outer, nestedTransaction, nestedRenewal) = prepared(
            payload,
            transaction: transaction,
            renewal: renewal,
            forgery: forgery
        )
        return try outerBody(&outer, transaction: nestedTransaction, renewal: nestedRenewal, forgery: forgery)
    }

    /// The notification as it is signed (see ``signNotification(_:transaction:renewal:forgery:)``): the app's
    /// identity completed, payload forgeries applied, and no nested payloads for a summary.
    private func prepared(
        _ payload: ResponseBodyV2DecodedPayload,
        transaction: JWSTransactionDecodedPayload?,
        renewal: JWSRenewalInfoDecodedPayload?,
        forgery: Forgery?
    ) -> (ResponseBodyV2DecodedPayload, JWSTransactionDecodedPayload?, JWSRenewalInfoDecodedPayload?) {
        var outer = payload
        let date = forgedDate(forgery, signedDate: outer.signedDate ?? Self.nowMilliseconds())
        outer.signedDate = forgery == .datesInSeconds ? date / 1000 : date
        if var summary = outer.summary {
            // A mass extension's summary carries no `data`: the app's identity is the summary's own.
            summary.appAppleId = summary.appAppleId ?? app.appAppleId
            if forgery == .wrongBundle { summary.bundleId = forgedApp(forgery).bundleId }
            if forgery == .wrongEnvironment { summary.environment = forgedApp(forgery).environment }
            outer.summary = summary
            outer.data = nil
            return (outer, nil, nil)
        }
        var data = outer.data ?? NotificationData()
        data.appAppleId = data.appAppleId ?? app.appAppleId
        // Rewritten in place: `if var` copied each payload, retaining every String in it.
        var nestedTransaction = transaction
        if nestedTransaction != nil {
            data.bundleVersion = data.bundleVersion ?? app.bundleVersion
            rewrite(&nestedTransaction!, forgery: forgery)
        }
        var nestedRenewal = renewal
        if nestedRenewal != nil {
            let signed = nestedRenewal?.signedDate
            nestedRenewal?.signedDate = forgedDate(forgery, signedDate: signed ?? Self.nowMilliseconds())
            if forgery == .wrongEnvironment { nestedRenewal?.environment = forgedApp(forgery).environment }
            if forgery == .datesInSeconds { nestedRenewal = nestedRenewal?.mappingDates(Self.toSeconds) }
        }
        if forgery == .wrongBundle { data.bundleId = forgedApp(forgery).bundleId }
        if forgery == .wrongEnvironment { data.environment = forgedApp(forgery).environment }
        outer.data = data
        return (outer, nestedTransaction, nestedRenewal)
    }

    /// Applies a payload forgery (bundle, environment, dates) to a transaction.
    private func rewrite(_ transaction: inout JWSTransactionDecodedPayload, forgery: Forgery?) {
        transaction.signedDate = forgedDate(forgery, signedDate: transaction.signedDate ?? Self.nowMilliseconds())
        if forgery == .wrongBundle { transaction.bundleId = forgedApp(forgery).bundleId }
        if forgery == .wrongEnvironment { transaction.environment = forgedApp(forgery).environment }
        if forgery == .datesInSeconds { transaction = transaction.mappingDates(Self.toSeconds) }
    }
}
