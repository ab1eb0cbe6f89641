import AppStoreModel
import Primitives
public import Profile
import Simulation

// What follows a delivery once its outcome is known, and the target restarts a profile plans.

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
    ///
    /// A follow-up's ID spells its chain in 44 bits, so that a witness, whose entries keep 44 bits of a
    /// delivery's number, cites it by the number the history records: bit 43 set (planned IDs count up from 1
    /// below it), the planned delivery the chain starts from (34 bits), which of its follow-ups starts the
    /// chain (4 bits: its after-success duplicates are several) and the attempts since it (5 bits). Only a
    /// planned delivery has more than one follow-up; a chain past those sizes (more than 2^34 planned
    /// deliveries, a longer chain than any profile allows) takes a hashed ID above 44 bits instead.
    public static func followUpID(of parent: UInt64, _ index: Int) -> UInt64 {
        let mark: UInt64 = 1 << 43
        if parent < mark {
            if parent < 1 << 34 - 1, (0..<16).contains(index) { return mark | parent << 9 | UInt64(index) << 5 | 1 }
        } else if parent < 1 << 44, index == 0, parent & 0x1F < 0x1F {
            return parent + 1
        }
        return (1 << 62) | (SplitMix64.mix(parent) & 0x0FFF_FFFF_FFFF_FF00) | UInt64(index & 0xFF)
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
            next.append(Self.followUp(of: delivery, index: next.count, copy: copy, at: time, fault))
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
            if let (time, fault) = nextDeviceAttempt(after: delivery, outcome: outcome, at: now) {
                again(.redelivery, at: time, fault)
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

    /// A copy of `delivery` as its `index`-th follow-up: the next attempt of its chain, or (an after-success
    /// duplicate) a chain of its own, with the same bytes.
    private static func followUp(
        of delivery: PlannedDelivery,
        index: Int,
        copy: Copy,
        at time: Double,
        _ fault: AppliedFault
    ) -> PlannedDelivery {
        var follow = delivery
        follow.id = followUpID(of: delivery.id, index)
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
        return follow
    }

    /// When a device delivers an unfinished transaction again, and why; nil when it finished, when its request
    /// never left, or after its last attempt.
    private func nextDeviceAttempt(
        after delivery: PlannedDelivery,
        outcome: DeliveryOutcome,
        at now: Double
    ) -> (Double, AppliedFault)? {
        // A device whose request never left keeps its transaction unfinished, but nothing reached the target
        // (no device endpoint, a missed slot): redelivering would only repeat that, and the webhook names the
        // account. A purchase without `appAccountToken` the target refused (down) is posted again at each
        // launch, however long the outage (the run's end bounds it): only the device's post names its account.
        if case .notSent(_, let harnessLimited) = outcome {
            guard !harnessLimited, case .device(let device) = delivery.action.delivery,
                device.transaction.payload.appAccountToken == nil
            else { return nil }
            return (
                now + relaunchSeconds,
                AppliedFault(fault: "device", detail: "not sent, and no appAccountToken; redelivered at next launch")
            )
        }
        guard delivery.attempt + 1 < maxDeviceAttempts else { return nil }
        if let relaunch = delivery.crashRelaunchSeconds {
            return (
                now + relaunch,
                AppliedFault(fault: "crashBeforeFinish", detail: "relaunched; unfinished transaction redelivered")
            )
        }
        if delivery.network == .lostResponse {
            return (
                now + lostResponseRetrySeconds,
                AppliedFault(fault: "lostResponse", detail: "no answer seen; unfinished transaction redelivered")
            )
        }
        guard !outcome.isAcknowledged else { return nil }
        return (
            now + relaunchSeconds,
            AppliedFault(fault: "device", detail: "not finished after a non-2xx; redelivered at next launch")
        )
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
