import AppStoreModel
package import AppStoreServerAPI
import Chaos
import Minting
import Profile
import Simulation

/// The app receipt a device request carries (`{appReceipt}`): the account's in-app purchases as the App Store
/// knows them at the request's intended time, read from the store the world feeds, signed by the run's PKI for
/// the profile's app. A consumable stays in it only until the device finishes it, so the receipt lists the
/// consumable of the request itself and no earlier one, as Apple's does.
///
/// A forged device delivery carries a forged receipt that lists its forged transaction, forged the way its
/// forgery names (see `Minter.appReceipt(_:creationDate:forgery:)`). A forgery that is no
/// signed object (`bare-product-id`, a pulling flow's ids) carries the genuine receipt, without the claim.
package struct DeviceReceipts: Sendable {
    /// What the App Store knows, fed by the world ahead of the schedule (each fact visible from its time).
    let store: APIStore
    /// Wall-clock milliseconds of the run's t = 0.
    let startMillis: Int64

    /// Receipts read from `store`, whose world starts at `startMillis`.
    package init(store: APIStore, startMillis: Int64) {
        self.store = store
        self.startMillis = startMillis
    }

    /// Whether a device template of `endpoints` names `{appReceipt}` (a run then keeps the store for it).
    package static func needed(by endpoints: Endpoints) -> Bool {
        [endpoints.deviceDelivery, endpoints.deviceReport].contains { $0?.placeholders.contains(.appReceipt) == true }
    }

    /// The receipt of the delivery's account at the delivery's intended time, in base64.
    /// - Throws: `SigningError` when OpenSSL fails.
    func receipt(for delivery: PlannedDelivery, minter: Minter) throws -> String {
        let action = delivery.action
        let now = startMillis + Int64((delivery.at * 1000).rounded())
        let own = action.transaction?.transactionId
        var inApp = store.transactions(ofCustomer: action.account, at: now)
            .filter { $0.type != .consumable || $0.transactionId == own }
            .map(\.payload)
        let forgery = delivery.forgery.map(Forgery.init(rawValue:)).flatMap { $0.isKnown ? $0 : nil }
        guard let forgery else { return try minter.appReceipt(inApp, creationDate: now) }
        // `tampered-payload` lists it ten times over after signing, what a target that skips the check credits.
        if case .device(let device) = action.delivery { inApp.append(device.transaction.payload) }
        return try minter.appReceipt(inApp, creationDate: now, forgery: forgery)
    }
}
