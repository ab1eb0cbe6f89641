import AppStoreModel
import Primitives
public import Profile
public import Simulation

/// Turns the clean action stream into the hostile delivery stream of the profile's faults.
///
/// Every fault is drawn from a generator seeded from the profile's seed and recorded in the delivery's
/// ``PlannedDelivery/faults``, so a run replays exactly. Faults only ever delay a delivery (reordering,
/// duplicates, a late listener, forged copies), never move it before its lifecycle event, so nothing is sent
/// before the `signedDate` it carries, as with the real App Store. The stream stays time-ordered: it holds a
/// delivery only until the clean stream has passed its time, so memory does not grow with the run.
///
/// ```swift
/// var chaos = ChaosStream(World(profile: profile, startMillis: start), profile: profile)
/// let policy = ChaosPolicy(profile: profile)
/// while let delivery = chaos.next() {
///     let outcome = send(delivery)                       // Load
///     for next in policy.followUps(after: delivery, outcome: outcome, at: now) { schedule(next) }
/// }
/// ```
public struct ChaosStream<Upstream: IteratorProtocol>: IteratorProtocol, Sequence where Upstream.Element == Action {
    private var upstream: Upstream
    private var upstreamDone = false
    private var upstreamTime = 0.0
    private let faults: Faults
    private var rng: SplitMix64
    /// The run's identities, which name forged notifications and made-up transaction IDs too.
    private let identities: Identities
    // The delivery is boxed so sifting moves one reference instead of a large struct.
    private var buffer = Heap<TimedEntry<Box>>()
    private var nextID: UInt64 = 0
    private var order: UInt64 = 0
    private var listenerStarts: [Int: Double] = [:]
    private let devices: Int
    /// The forgeries to draw from, per delivery kind, fixed at the start: only those the target's verifier
    /// rejects, without the one that does not apply to the kind.
    private let notificationForgeries: [String]
    private let deviceForgeries: [String]
    /// Whether device deliveries pull (their body names a transaction id, no JWS): their forgeries are then ids.
    private let devicePulls: Bool
    /// Recent genuine purchases delivered by devices, for the other-account forgery of a pulling flow.
    private var recentPurchases: [(account: String, transactionId: String, originalTransactionId: String)] = []

    /// The target restarts of the run, drawn from the seed (empty without `faults.targetRestart`).
    public let restarts: [TargetRestartEvent]

    /// Wraps a clean action stream.
    /// - Parameters:
    ///   - upstream: the clean, time-ordered actions (a `World` from Simulation).
    ///   - profile: the profile whose faults and seed to use.
    public init(_ upstream: Upstream, profile: Profile) {
        self.upstream = upstream
        faults = profile.faults
        devices = profile.population.devicesPerAccount
        // `forged-inner-transaction` only exists for notifications (the outer JWS stays genuine), and
        // `bare-product-id` (a claim without a JWS) only for device deliveries.
        let forgeries = profile.faults.forgery?.kinds(onlineChecks: profile.target.verifierOnlineChecks) ?? []
        notificationForgeries = forgeries.filter { $0 != Faults.bareProductIDForgery }
        devicePulls = profile.target.deviceDelivery?.pulls == true
        // A pulling flow carries no JWS, so what a device can forge is the id it sends.
        deviceForgeries =
            devicePulls
            ? Faults.pullForgeryKinds + forgeries.filter { $0 == Faults.bareProductIDForgery }
            : forgeries.filter { $0 != "forged-inner-transaction" }
        rng = SplitMix64(seed: SplitMix64.mix(profile.seed ^ 0xC4A0_5C4A_05C4_A05C))
        identities = profile.identities
        restarts = TargetRestartEvent.planned(by: profile)
    }

    /// The next delivery in intended-time order, or nil at the end.
    public mutating func next() -> PlannedDelivery? {
        // Every delivery is due at or after its action, so once the clean stream has passed the earliest
        // buffered time nothing still to come can precede it.
        while !upstreamDone, buffer.first.map({ upstreamTime < $0.at }) ?? true {
            guard let action = upstream.next() else {
                upstreamDone = true
                break
            }
            upstreamTime = action.at
            plan(action)
        }
        return buffer.pop()?.payload.delivery
    }

    private mutating func add(_ delivery: PlannedDelivery) {
        order += 1
        buffer.push(TimedEntry(at: delivery.at, order: order, payload: Box(delivery)))
    }

    private mutating func newID() -> UInt64 {
        nextID += 1
        return nextID
    }

    private mutating func plan(_ action: Action) {
        var delivery = PlannedDelivery(
            id: newID(),
            action: action,
            at: action.at,
            copy: .original,
            afterSuccessDelays: [],
            faults: [],
            attempt: 0
        )
        if let cause = action.causedBy {
            delivery.faults.append(AppliedFault(fault: cause, detail: "lifecycle event caused by the \(cause) fault"))
        }
        switch action.delivery {
        case .marker:
            add(delivery)
            return
        case .notification:
            planNotification(&delivery)
        case .device(let device):
            planDevice(&delivery, device)
        case .report:
            break
        }
        planNetwork(&delivery)
        add(delivery)
        planForgery(of: delivery)
    }

    private mutating func planNotification(_ delivery: inout PlannedDelivery) {
        if let reorder = faults.reorder, rng.chance(reorder.probability) {
            // Only later: the App Store never sends a notification before its own signedDate (an earlier one
            // would look future-dated to the target). Delaying some notifications past newer ones of the same
            // account is what shuffles them.
            let delay = rng.between(0, reorder.windowSeconds)
            delivery.at += delay
            delivery.faults.append(
                AppliedFault(fault: "reorder", detail: "delayed \(format(delay)) s after its lifecycle event")
            )
        }
        guard let duplicate = faults.duplicate, rng.chance(duplicate.probability) else { return }
        let copies = 1 + rng.below(duplicate.maxCopies)
        for _ in 0..<copies {
            let draw = rng.unit()
            if draw < duplicate.concurrent {
                var copy = duplicateOf(delivery, copy: .concurrentDuplicate)
                copy.faults = [
                    AppliedFault(
                        fault: "duplicate",
                        detail: "same bytes sent concurrently with delivery \(delivery.id)"
                    )
                ]
                add(copy)
            } else if draw < duplicate.concurrent + duplicate.afterSuccess {
                delivery.afterSuccessDelays.append(rng.between(0, duplicate.maxDelaySeconds))
                delivery.faults.append(
                    AppliedFault(fault: "duplicate", detail: "same bytes will be sent again after a 2xx")
                )
            } else {
                var copy = duplicateOf(delivery, copy: .delayedDuplicate)
                let delay = rng.between(0, duplicate.maxDelaySeconds)
                copy.at += delay
                copy.faults = [
                    AppliedFault(
                        fault: "duplicate",
                        detail: "same bytes as delivery \(delivery.id), \(format(delay)) s later"
                    )
                ]
                add(copy)
            }
        }
    }

    private func format(_ seconds: Double) -> String { String(Double(Int((seconds * 1000).rounded())) / 1000) }

    private mutating func duplicateOf(_ delivery: PlannedDelivery, copy: Copy) -> PlannedDelivery {
        var duplicate = delivery
        duplicate.id = newID()
        duplicate.copy = copy
        duplicate.sameBytesAs = delivery.id
        duplicate.afterSuccessDelays = []
        duplicate.network = nil
        return duplicate
    }

    private mutating func planDevice(_ delivery: inout PlannedDelivery, _ device: DeviceDelivery) {
        let key = delivery.action.account &* 64 &+ device.device
        if device.source == .updates {
            if let until = listenerStarts[key], until > delivery.at {
                delivery.faults.append(
                    AppliedFault(
                        fault: "lateListener",
                        detail: "held until the late listener starts at \(format(until)) s"
                    )
                )
                delivery.at = until
            } else if let late = faults.lateListener, rng.chance(late.probability) {
                let until = delivery.at + late.delaySeconds
                listenerStarts[key] = until
                delivery.faults.append(
                    AppliedFault(
                        fault: "lateListener",
                        detail: "the listener starts \(format(late.delaySeconds)) s late"
                    )
                )
                delivery.at = until
            }
            if listenerStarts.count > 4096 { listenerStarts = listenerStarts.filter { $0.value > delivery.at } }
        }
        if let crash = faults.crashBeforeFinish, rng.chance(crash.probability) {
            delivery.crashRelaunchSeconds = crash.relaunchSeconds
            delivery.faults.append(
                AppliedFault(
                    fault: "crashBeforeFinish",
                    detail:
                        "the app crashes before finish() and redelivers after relaunching in \(format(crash.relaunchSeconds)) s"
                )
            )
        }
    }

    private mutating func planNetwork(_ delivery: inout PlannedDelivery) {
        if let lost = faults.lostResponse, rng.chance(lost.probability) {
            delivery.network = .lostResponse
            delivery.faults.append(
                AppliedFault(fault: "lostResponse", detail: "the answer is thrown away; a retry follows")
            )
        } else if let timeout = faults.networkTimeout, rng.chance(timeout.probability) {
            delivery.network = .timeout
            delivery.faults.append(AppliedFault(fault: "networkTimeout", detail: "the client times out"))
        } else if let reset = faults.networkReset, rng.chance(reset.probability) {
            delivery.network = .reset
            delivery.faults.append(AppliedFault(fault: "networkReset", detail: "the connection is reset while sending"))
        }
    }

    /// A forged copy of a granting delivery, with fresh IDs so that accepting it shows as an unlock nothing pays for.
    private mutating func planForgery(of delivery: PlannedDelivery) {
        rememberPurchase(delivery)
        guard let forgery = faults.forgery, delivery.action.truth.kind == .grant, rng.chance(forgery.probability)
        else { return }
        let kinds: [String]
        if case .device = delivery.action.delivery { kinds = deviceForgeries } else { kinds = notificationForgeries }
        guard !kinds.isEmpty else { return }
        let kind = kinds[rng.below(kinds.count)]
        var forged = delivery
        forged.id = newID()
        forged.copy = .forged
        forged.forgery = kind
        forged.network = nil
        forged.crashRelaunchSeconds = nil
        forged.afterSuccessDelays = []
        forged.at = delivery.at + rng.between(0, 0.5)
        var fakeID = String(identities.forgedTransactionBase + forged.id)
        var fakeOriginal: String?
        if devicePulls, case .device = delivery.action.delivery {
            // A made-up id is one the App Store never issued; another account's is genuine, so only the
            // `appAccountToken` in the API's signed answer tells it apart.
            fakeOriginal = fakeID
            if kind == "other-account-transaction-id",
                let other = recentPurchases.last(where: { $0.account != delivery.action.appAccountToken })
            {
                (fakeID, fakeOriginal) = (other.transactionId, other.originalTransactionId)
            }
        }
        guard let action = forge(delivery.action, kind: kind, transactionId: fakeID, original: fakeOriginal) else {
            return
        }
        forged.action = action
        forged.faults = [
            AppliedFault(fault: "forgery", detail: "\(kind) variant of delivery \(delivery.id), transaction \(fakeID)")
        ]
        add(forged)
    }

    /// Keeps the last few purchases devices report, whose genuine IDs an `other-account-transaction-id` forgery
    /// replays for another account. Only those with an `appAccountToken`: the App Store's answer for one
    /// without says nothing of whose it is, so a backend could not tell such a claim from the buyer's own.
    private mutating func rememberPurchase(_ delivery: PlannedDelivery) {
        guard devicePulls, case .device(let device) = delivery.action.delivery, delivery.action.truth.kind == .grant,
            device.transaction.payload.appAccountToken != nil
        else { return }
        recentPurchases.append(
            (
                delivery.action.appAccountToken, device.transaction.transactionId,
                device.transaction.originalTransactionId
            )
        )
        if recentPurchases.count > 16 { recentPurchases.removeFirst() }
    }

    /// The `kind` forgery of `action`: its transaction under `transactionId` (and `original`, for a device),
    /// owing nothing; nil for a delivery that carries no transaction.
    private mutating func forge(
        _ action: Action,
        kind: String,
        transactionId fakeID: String,
        original: String?
    )
        -> Action?
    {
        var action = action
        switch action.delivery {
        case .notification(var note):
            note.notificationUUID = identities.uuid(&rng)
            note.transaction?.transactionId = fakeID
            if note.transaction?.type != .autoRenewableSubscription {
                note.transaction?.originalTransactionId = fakeID
            }
            action.delivery = .notification(note)
        case .device(var device):
            device.transaction.transactionId = fakeID
            if let original {
                device.transaction.originalTransactionId = original
            } else if device.transaction.type != .autoRenewableSubscription {
                device.transaction.originalTransactionId = fakeID
            }
            action.delivery = .device(device)
        case .report, .marker:
            return nil
        }
        var truth = Truth(kind: .none, effectiveDate: action.truth.effectiveDate)
        truth.productId = action.truth.productId
        truth.productType = action.truth.productType
        truth.quantity = action.truth.quantity
        // A tampered device transaction claims more than was signed (a tampered notification only dodges
        // deduplication): a target that trusts it credits the claim.
        if kind == "tampered-payload", case .device = action.delivery {
            truth.quantity *= Faults.tamperedQuantityFactor
        }
        truth.transactionId = fakeID
        action.truth = truth
        return action
    }
}

/// A delivery by reference, so the chaos heap sifts one pointer per entry.
private final class Box: Sendable {
    let delivery: PlannedDelivery
    init(_ delivery: PlannedDelivery) { self.delivery = delivery }
}
