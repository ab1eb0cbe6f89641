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
        if devicePulls, case .device(let device) = delivery.action.delivery, delivery.action.truth.kind == .grant {
            recentPurchases.append(
                (
                    delivery.action.appAccountToken, device.transaction.transactionId,
                    device.transaction.originalTransactionId
                )
            )
            if recentPurchases.count > 16 { recentPurchases.removeFirst() }
        }
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
        var action = delivery.action
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
            if let fakeOriginal {
                device.transaction.originalTransactionId = fakeOriginal
            } else if device.transaction.type != .autoRenewableSubscription {
                device.transaction.originalTransactionId = fakeID
            }
            action.delivery = .device(device)
        case .report, .marker:
            return
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
        forged.action = action
        forged.faults = [
            AppliedFault(fault: "forgery", detail: "\(kind) variant of delivery \(delivery.id), transaction \(fakeID)")
        ]
        add(forged)
    }
}

/// What happens after a delivery's outcome is known: retries, redeliveries, after-200 duplicates.
/// A pure function of the delivery and its outcome (every random choice was drawn when planning), so it can be
/// called from any thread in any order and the run stays reproducible.
///
/// A webhook has one retry mechanism, the App Store's: any attempt that was not acknowledged (a rejection, a
/// timeout, a reset, a lost response, a refused connection) is followed by the next attempt of its chain, with
/// the same bytes, until one is acknowledged or the schedule is spent. Forged deliveries are never retried:
/// Apple never sent them.
public struct ChaosPolicy: Sendable {
    /// Seconds until a device relaunches after a failed delivery (from `crashBeforeFinish`, else 2).
    public var relaunchSeconds: Double
    /// Seconds until the attempt that follows a lost response (`lostResponse.retrySeconds`): a device's
    /// redelivery, or a webhook's next attempt (with App Store retries off, its only retry).
    public var lostResponseRetrySeconds: Double
    /// Seconds after a webhook chain's first attempt at which the App Store retries it while unacknowledged
    /// (`faults.appStoreRetries`, compressed by the profile's time compression); empty when retries are off.
    public var appStoreRetryDelays: [Double]
    /// The least real time between an unacknowledged attempt's answer and its retry, in seconds
    /// (`faults.appStoreRetries.floorSeconds`).
    public var appStoreRetryFloor: Double
    /// Most redeliveries of one device transaction.
    public var maxDeviceAttempts: Int
    /// The App Store time the planned restarts stand for (`targetRestart.outageHours`), as run time from each
    /// kill: the App Store's webhook attempts due inside fail as into a target that is down.
    public var declaredOutages: [Range<Double>]

    /// The policy of a profile.
    public init(profile: Profile) {
        relaunchSeconds = profile.faults.crashBeforeFinish?.relaunchSeconds ?? 2
        lostResponseRetrySeconds = profile.faults.lostResponse?.retrySeconds ?? 2
        let retries = profile.faults.appStoreRetries
        appStoreRetryDelays =
            retries.enabled ? retries.scheduleHours.map { profile.timeCompression.seconds(days: $0 / 24) } : []
        appStoreRetryFloor = retries.floorSeconds
        declaredOutages = TargetRestartEvent.planned(by: profile).filter { $0.outageSeconds > 0 }.map {
            $0.at..<($0.at + $0.outageSeconds)
        }
        maxDeviceAttempts = 5
    }

    /// Whether `t` seconds into the run falls inside the App Store time a planned restart declares
    /// (`targetRestart.outageHours`): the App Store's webhook attempts due then fail, even once the target is back.
    public func inDeclaredOutage(_ t: Double) -> Bool {
        declaredOutages.contains { $0.contains(t) }
    }

    /// The ID of the `index`-th follow-up of a delivery (unique, disjoint from planned IDs).
    public static func followUpID(of parent: UInt64, _ index: Int) -> UInt64 {
        (1 << 62) | (SplitMix64.mix(parent) & 0x0FFF_FFFF_FFFF_FF00) | UInt64(index & 0xFF)
    }

    /// The deliveries that follow `delivery` given its outcome, observed `now` seconds into the run. None is
    /// due before `now`, so none goes out before the signedDate its bytes carry.
    public func followUps(
        after delivery: PlannedDelivery,
        outcome: DeliveryOutcome,
        at now: Double
    ) -> [PlannedDelivery] {
        var next: [PlannedDelivery] = []
        func again(_ copy: Copy, at time: Double, _ fault: AppliedFault) {
            var follow = delivery
            follow.id = Self.followUpID(of: delivery.id, next.count)
            follow.copy = copy
            follow.at = time
            follow.sameBytesAs = delivery.sameBytesAs ?? delivery.id
            follow.network = nil
            follow.crashRelaunchSeconds = nil
            follow.afterSuccessDelays = []
            follow.attempt = delivery.attempt + 1
            follow.faults = [fault]
            if copy == .afterSuccessDuplicate {
                // A duplicate is a chain of its own, not an attempt of this one.
                follow.attempt = 0
                follow.firstAttemptAt = nil
            } else {
                follow.firstAttemptAt = delivery.firstAttemptAt ?? delivery.at
            }
            if case .device(var device) = follow.action.delivery, copy == .redelivery {
                device.source = .unfinished
                follow.action.delivery = .device(device)
            }
            next.append(follow)
        }
        let acknowledged = outcome.isAcknowledged
        if acknowledged {
            for delay in delivery.afterSuccessDelays {
                again(
                    .afterSuccessDuplicate,
                    at: now + delay,
                    AppliedFault(fault: "duplicate", detail: "same bytes again after a 2xx to delivery \(delivery.id)")
                )
            }
        }
        guard !delivery.isForged else { return next }
        switch delivery.action.delivery {
        case .device:
            // A device whose request never left keeps its transaction unfinished, but nothing reached the target
            // (no device endpoint, a missed slot): redelivering would only repeat that.
            if case .notSent = outcome { return next }
            guard delivery.attempt + 1 < maxDeviceAttempts else { return next }
            if let relaunch = delivery.crashRelaunchSeconds {
                again(
                    .redelivery,
                    at: now + relaunch,
                    AppliedFault(fault: "crashBeforeFinish", detail: "relaunched; unfinished transaction redelivered")
                )
            } else if delivery.network == .lostResponse {
                again(
                    .redelivery,
                    at: now + lostResponseRetrySeconds,
                    AppliedFault(fault: "lostResponse", detail: "no answer seen; unfinished transaction redelivered")
                )
            } else if !acknowledged {
                again(
                    .redelivery,
                    at: now + relaunchSeconds,
                    AppliedFault(fault: "device", detail: "not finished after a non-2xx; redelivered at next launch")
                )
            }
        case .notification:
            // A send the harness missed never reached the target: retrying it would only add to the load that
            // put the harness behind.
            if !acknowledged, !outcome.isHarnessLimited,
                let (time, fault) = nextWebhookAttempt(after: delivery, at: now)
            {
                again(.retry, at: time, fault)
            }
        case .report, .marker:
            break
        }
        return next
    }

    /// When the App Store tries an unacknowledged webhook again, and why; nil after its last attempt.
    private func nextWebhookAttempt(after delivery: PlannedDelivery, at now: Double) -> (Double, AppliedFault)? {
        let attempt = delivery.attempt + 2
        if delivery.network == .lostResponse {
            // Network faults are drawn for first attempts only. The fault's own knob says how soon the attempt
            // after a lost answer comes: with App Store retries on it is the chain's second attempt (the rest
            // keep Apple's schedule), with them off the harness still retries once, so the fault exercises the
            // target's idempotency either way.
            return (
                now + lostResponseRetrySeconds,
                AppliedFault(fault: "lostResponse", detail: "Apple saw no answer and retries (attempt \(attempt))")
            )
        }
        guard delivery.attempt < appStoreRetryDelays.count else { return nil }
        let first = delivery.firstAttemptAt ?? delivery.at
        // Apple's schedule counts from the first attempt; an answer that came later than the next slot (a slow
        // timeout under strong time compression) is retried as soon as it is known, never before, and never
        // sooner than the floor after it: a backend gets real time to act on between attempts. A slot inside a
        // declared outage keeps Apple's compressed schedule: the target is down then, with nothing to act on.
        let slot = Swift.max(now, first + appStoreRetryDelays[delivery.attempt])
        let due = inDeclaredOutage(slot) ? slot : Swift.max(slot, now + appStoreRetryFloor)
        let offset = Self.format(appStoreRetryDelays[delivery.attempt])
        return (
            due,
            AppliedFault(
                fault: "appStoreRetry",
                detail: "the App Store retries attempt \(attempt), \(offset) s after the first attempt"
            )
        )
    }

    private static func format(_ seconds: Double) -> String {
        String(Double(Int((seconds * 1000).rounded())) / 1000)
    }
}

/// A delivery by reference, so the chaos heap sifts one pointer per entry.
private final class Box: Sendable {
    let delivery: PlannedDelivery
    init(_ delivery: PlannedDelivery) { self.delivery = delivery }
}

extension TargetRestartEvent {
    /// The target restarts a profile plans, drawn from its seed alone, in time order (empty without
    /// `faults.targetRestart`).
    public static func planned(by profile: Profile) -> [TargetRestartEvent] {
        guard let restart = profile.faults.targetRestart else { return [] }
        var rng = SplitMix64(seed: SplitMix64.mix(profile.seed ^ 0x0005_7A27))
        let events = (0..<restart.count).map { _ in
            TargetRestartEvent(
                at: rng.between(0.1, 0.9) * profile.durationSeconds,
                downSeconds: restart.downSeconds,
                killCommand: restart.killCommand,
                startCommand: restart.startCommand,
                startTimeoutSeconds: restart.startTimeoutSeconds,
                outageSeconds: profile.timeCompression.seconds(days: restart.outageHours / 24)
            )
        }
        return events.sorted { $0.at < $1.at }
    }
}
