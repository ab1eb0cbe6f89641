import Chaos
import Checking
import Foundation
import Load
import Profile
import Simulation
import TargetProcesses

/// The run's stream for the load engine: minted deliveries in time order, the follow-ups their outcomes
/// cause (retries, redeliveries, after-200 duplicates) and safety probes, merged by intended time.
///
/// Confined to the engine's thread (the engine calls `nextDue`/`take`, and the sink calls `handle`), so it
/// needs no lock of its own. Sending is in `RunScheduler+Sending.swift`, the answers in `RunScheduler+Results.swift`;
/// its state is visible to the module so those extensions can reach it, and only they change it.
final class RunScheduler: TimedRequestSource {
    struct Sent {
        var delivery: PlannedDelivery?
        var probeAccount: String?
        /// For a read after recovery, when the target went down (see ``RecoveryProbes``).
        var recoveryDown: Double?
        /// How the delivery's role reads answers.
        var classification: ResponseClassification?
        /// The delivery's fields as its `dispatch` line wrote them, for its answer's lines.
        var identity = HistoryIdentity()
    }

    let pipeline: MintPipeline
    let cache: BodyCache
    let bodies: DeliveryBodies
    let checker: Checker
    let policy: ChaosPolicy
    let endpoints: Endpoints
    let history: HistoryLog
    let recorder: LoadRecorder
    let only: String?
    let restartWindows: RestartWindows
    /// The end of the longest settle (schedule + `settleMaxSeconds`), in seconds: retries, redeliveries and
    /// relaunches due by then are still sent, and the engine runs until none is left; later ones are not, so the
    /// run still ends by schedule + the longest settle + the request timeout + final probing.
    let endOfFollowUps: Double

    /// Where HTTP probe answers go when the probe has a `transform` (a process, so not on this thread).
    let transformer: SafetyProbes?
    /// The `command` or `bulk` probe's rounds, when the target is read by a command: reads after recovery go there.
    let commandProbes: SafetyProbes?
    /// Where each webhook attempt's outcome goes when the run serves the App Store Server API.
    let attempts: WebhookAttempts?
    /// The request hook the requests of its roles go through before they are sent, when the profile has one.
    let hook: RequestHookStage?
    /// Whether the hook's failure has been booked (the requests it held, as not sent).
    var hookFailureBooked = false

    var followUps = TimeHeap<PlannedDelivery>()
    /// Follow-ups waiting in `followUps`, per minted body they resend (`sameBytesAs ?? id`): a body is forgotten
    /// once no follow-up waits for it, so the cache holds what is still to be resent, not the whole run.
    var waitingFor: [UInt64: Int] = [:]
    /// Safety probes due, until the end of the profile's traffic (the final probe reads every account then).
    var probes: SafetyProbeSchedule
    /// Reads after recovery: the accounts an outage may have lost, probed as soon as the target answers again.
    var recovery = RecoveryProbes()
    /// The restart windows closed that ``noticeRecoveries(at:)`` has handled.
    var windowsSeen = 0
    var sent: [Int: Sent] = [:]
    var nextRequestID = 0
    /// Shed deliveries booked since the engine last asked (``takeBookedMissed()``).
    var bookedMissed = 0
    /// Shed deliveries by kind, and by role and kind in the current second, for one history line each.
    var shedTally = ShedTally()
    /// Why a shed delivery was missed, as the oracle books it, made once.
    let shedReason: String

    /// Faults injected, by name.
    var faultCounts: [String: Int] = [:]
    /// Deliveries that could not be minted (a bug), with the reason.
    var mintFailures: [String] = []
    /// Seconds into the run when each invariant first failed.
    var firstDetection: [Invariant: Double] = [:]
    /// Whether any probe answer carried `grants`.
    var probeSawGrants = false
    /// The last time a delivery or probe was sent, in seconds.
    var lastSend = 0.0
    /// Follow-ups (retries, redeliveries, duplicates) not sent because they fell after the longest settle.
    var followUpsAfterSettle = 0
    /// App Store retries that waited for a planned restart to end (see ``holdsForRestart(_:at:)``).
    var retriesHeldForRestart = 0
    /// The retries waiting so now, so each is counted once however often it is asked about.
    var heldForRestart = Set<UInt64>()
    /// App Store attempts failed inside the App Store time planned restarts declare.
    var declaredOutages = DeclaredOutages()
    /// How often a held retry asks whether the target is back, in seconds.
    static let restartPoll = 0.2
    /// Answers outside 2xx that their role classified as acknowledged, by status class (`4xx`...), so the
    /// report does not count them as errors.
    var acknowledgedOutside2xx: [String: Int] = [:]
    /// How long requests waited for a connection, for the report's note.
    var connectionWaits = ConnectionWaits()
    /// Requests refused as unauthorized (401, 403), for the report's note.
    var unauthorized = UnauthorizedTally()
    /// Deliveries answered "retry later", for the report's note.
    var deferred = DeferredTally()
    /// Safety probes the target answered 429, for the report's note.
    var rateLimitedProbes: RateLimitedSafetyProbes { probes.rateLimited }
    /// Whether a planned restart has the target down `t` seconds into the run: from its kill until it answers
    /// again, or its restart failed.
    func restartUnderWay(at t: Double) -> Bool { restartWindows.contains(t) }
    /// Until when the target's `Retry-After` asked not to be probed, in seconds since the start.
    var probesHeldUntil: Double { probes.heldUntil }

    init(
        pipeline: MintPipeline,
        cache: BodyCache,
        bodies: DeliveryBodies,
        checker: Checker,
        policy: ChaosPolicy,
        endpoints: Endpoints,
        history: HistoryLog,
        recorder: LoadRecorder,
        only: String?,
        restartWindows: RestartWindows,
        endOfSchedule: Double,
        endOfFollowUps: Double,
        transformer: SafetyProbes? = nil,
        commandProbes: SafetyProbes? = nil,
        attempts: WebhookAttempts? = nil,
        hook: RequestHookStage? = nil
    ) {
        self.hook = hook
        self.transformer = transformer
        self.commandProbes = commandProbes
        self.attempts = attempts
        self.pipeline = pipeline
        self.cache = cache
        self.bodies = bodies
        self.checker = checker
        self.policy = policy
        self.endpoints = endpoints
        self.history = history
        self.recorder = recorder
        self.only = only
        self.restartWindows = restartWindows
        // Safety probes go on while follow-ups do: a retry's window is as real as the first attempt's.
        probes = SafetyProbeSchedule(endOfSchedule: endOfFollowUps)
        self.endOfFollowUps = endOfFollowUps
        shedReason = "missed: \(pipeline.shedReason)"
    }

    // MARK: TimedRequestSource

    func nextDue() -> Duration? {
        noticeRecoveries(at: nil)
        // A failed hook stops the run: nothing more is released, and the engine ends with what is in flight.
        guard hookWorks() else { return nil }
        // Asked for every release: two-way minimums, not an array of candidates.
        var first = min(pipelineAt ?? .infinity, followUps.firstTime ?? .infinity)
        first = min(first, min(probes.firstTime ?? .infinity, recovery.firstTime ?? .infinity))
        if let hook { first = min(first, hook.nextDue ?? .infinity) }
        guard first < .infinity else { return nil }
        return .nanoseconds(Int64(first * 1e9))
    }

    /// Not ready only when the earliest thing due is a delivery still being signed: the engine keeps its
    /// transfers moving meanwhile instead of blocking on the pipeline.
    var nextIsReady: Bool {
        guard let (at, ready) = pipeline.front(), !ready else { return true }
        return (followUps.firstTime ?? .infinity) < at || (probes.firstTime ?? .infinity) < at
            || (recovery.firstTime ?? .infinity) < at || (hook?.readyAt ?? .infinity) < at
    }

    /// The intended time of the pipeline's front, minted or not; nil at its end.
    var pipelineAt: Double? { pipeline.front()?.at }

    func take(_ intended: Duration) -> LoadRequest? {
        let now = intended.seconds
        noticeRecoveries(at: now)
        guard hookWorks() else { return nil }
        if let answered = hook?.popReady(dueBy: now) { return answered }
        if onlyHookDue(by: now) { return nil }
        // A read after recovery goes before anything else due: a redelivery must not repair what it reads.
        if let due = recovery.pop() { return probeRequest(due.account, at: now, recoveryDown: due.down) }
        let planned = pipeline.front()?.at ?? .infinity
        let follow = followUps.firstTime ?? .infinity
        let probe = probes.firstTime ?? .infinity
        if probe <= planned && probe <= follow, let account = probes.pop() {
            return probeRequest(account, at: now)
        }
        if follow <= planned, let delivery = followUps.pop() {
            if holdsForRestart(delivery, at: now) { return nil }
            if recovery.holds(delivery.action.appAccountToken, at: now) {
                var held = delivery
                held.at = now + Self.restartPoll / 4
                followUps.push(held, at: held.at)
                return nil
            }
            let key = delivery.sameBytesAs ?? delivery.id
            if let waiting = waitingFor[key] {
                waitingFor[key] = waiting > 1 ? waiting - 1 : nil
                waitingFor.releaseBurstStorage()
            }
            let body = cache.body(of: key) ?? (try? bodies.body(for: delivery)) ?? nil
            return deliveryRequest(delivery, body: body, failure: body == nil ? "body not available" : nil, at: now)
        }
        // The engine takes only what ``nextIsReady`` said was ready.
        if let minted = pipeline.takeMinted() {
            return deliveryRequest(minted.planned, body: minted.body, failure: minted.failure, at: now)
        }
        // Every shed delivery up to the next follow-up or probe, in one go (they are all past due).
        if case .ready(let front) = pipeline.head(), front.shed != nil {
            bookShed(pipeline.popShed(dueBy: min(follow, probe)))
        }
        return nil
    }

    var wakeDescriptor: Int32? { hook?.process.wakeDescriptor }

    func takeBookedMissed() -> Int {
        defer { bookedMissed = 0 }
        return bookedMissed
    }

    /// Deliveries intended in the last whole second: the world turns the schedule's events per second
    /// into a varying number of deliveries, so the status line shows what was really due.
    func intendedRate(at elapsed: Duration) -> Double { Double(lastSecondCount) }

    var currentSecond = 0
    var currentSecondCount = 0
    var lastSecondCount = 0

    func countIntended(at t: Double) {
        let second = Int(t)
        if second != currentSecond {
            lastSecondCount = second == currentSecond + 1 ? currentSecondCount : 0
            currentSecond = second
            currentSecondCount = 0
        }
        currentSecondCount += 1
    }
}
