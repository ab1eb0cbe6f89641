import Chaos
import Checking
import Foundation
import Load
import Profile
import Simulation

/// The run's stream for the load engine: minted deliveries in time order, the follow-ups their outcomes
/// cause (retries, redeliveries, after-200 duplicates) and safety probes, merged by intended time.
///
/// Confined to the engine's thread (the engine calls `nextDue`/`take`, and the sink calls `handle`), so it
/// needs no lock of its own.
final class RunScheduler: TimedRequestSource {
    private struct Sent {
        var delivery: PlannedDelivery?
        var probeAccount: String?
        /// For a read after recovery, when the target went down (see ``RecoveryProbes``).
        var recoveryDown: Double?
        /// How the delivery's role reads answers.
        var classification: ResponseClassification?
    }

    private let pipeline: MintPipeline
    private let cache: BodyCache
    private let bodies: DeliveryBodies
    private let checker: Checker
    private let policy: ChaosPolicy
    private let endpoints: Endpoints
    private let history: HistoryLog
    private let recorder: LoadRecorder
    private let only: String?
    private let restartWindows: RestartWindows
    /// The end of the longest settle (schedule + `settleMaxSeconds`), in seconds: retries, redeliveries and
    /// relaunches due by then are still sent, and the engine runs until none is left; later ones are not, so the
    /// run still ends by schedule + the longest settle + the request timeout + final probing.
    private let endOfFollowUps: Double

    /// Where HTTP probe answers go when the probe has a `transform` (a process, so not on this thread).
    private let transformer: SafetyProbes?
    /// The `command` or `bulk` probe's rounds, when the target is read by a command: reads after recovery go there.
    private let commandProbes: SafetyProbes?
    /// Where each webhook attempt's outcome goes when the run serves the App Store Server API.
    private let attempts: WebhookAttempts?

    private var followUps = TimeHeap<PlannedDelivery>()
    /// Follow-ups waiting in `followUps`, per minted body they resend (`sameBytesAs ?? id`): a body is forgotten
    /// once no follow-up waits for it, so the cache holds what is still to be resent, not the whole run.
    private var waitingFor: [UInt64: Int] = [:]
    /// Safety probes due, until the end of the profile's traffic (the final probe reads every account then).
    private var probes: SafetyProbeSchedule
    /// Reads after recovery: the accounts an outage may have lost, probed as soon as the target answers again.
    private var recovery = RecoveryProbes()
    /// The restart windows closed that ``noticeRecoveries(at:)`` has handled.
    private var windowsSeen = 0
    private var sent: [Int: Sent] = [:]
    private var nextRequestID = 0
    /// Shed deliveries booked since the engine last asked (``takeBookedMissed()``).
    private var bookedMissed = 0
    /// Shed deliveries by kind, and by role and kind in the current second, for one history line each.
    private var shedTally = ShedTally()
    /// Why a shed delivery was missed, as the oracle books it, made once.
    private let shedReason: String

    /// Faults injected, by name.
    private(set) var faultCounts: [String: Int] = [:]
    /// Deliveries that could not be minted (a bug), with the reason.
    private(set) var mintFailures: [String] = []
    /// Seconds into the run when each invariant first failed.
    private(set) var firstDetection: [Invariant: Double] = [:]
    /// Whether any probe answer carried `grants`.
    private(set) var probeSawGrants = false
    /// The last time a delivery or probe was sent, in seconds.
    private(set) var lastSend = 0.0
    /// Follow-ups (retries, redeliveries, duplicates) not sent because they fell after the longest settle.
    private(set) var followUpsAfterSettle = 0
    /// App Store retries that waited for a planned restart to end (see ``holdsForRestart(_:at:)``).
    private(set) var retriesHeldForRestart = 0
    /// The retries waiting so now, so each is counted once however often it is asked about.
    private var heldForRestart = Set<UInt64>()
    /// App Store attempts failed inside the App Store time planned restarts declare.
    private(set) var declaredOutages = DeclaredOutages()
    /// How often a held retry asks whether the target is back, in seconds.
    private static let restartPoll = 0.2
    /// Answers outside 2xx that their role classified as acknowledged, by status class (`4xx`...), so the
    /// report does not count them as errors.
    private(set) var acknowledgedOutside2xx: [String: Int] = [:]
    /// How long requests waited for a connection, for the report's note.
    private(set) var connectionWaits = ConnectionWaits()
    /// Requests refused as unauthorized (401, 403), for the report's note.
    private(set) var unauthorized = UnauthorizedTally()
    /// Deliveries answered "retry later", for the report's note.
    private(set) var deferred = DeferredTally()
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
        attempts: WebhookAttempts? = nil
    ) {
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
        let candidates = [pipelineAt, followUps.firstTime, probes.firstTime, recovery.firstTime].compactMap { $0 }
        guard let first = candidates.min() else { return nil }
        return .nanoseconds(Int64(first * 1e9))
    }

    /// Not ready only when the earliest thing due is a delivery still being signed: the engine keeps its
    /// transfers moving meanwhile instead of blocking on the pipeline.
    var nextIsReady: Bool {
        guard let (at, ready) = pipeline.front(), !ready else { return true }
        return min(followUps.firstTime ?? .infinity, probes.firstTime ?? .infinity, recovery.firstTime ?? .infinity)
            < at
    }

    /// The intended time of the pipeline's front, minted or not; nil at its end.
    private var pipelineAt: Double? { pipeline.front()?.at }

    func take(_ intended: Duration) -> LoadRequest? {
        let now = intended.seconds
        noticeRecoveries(at: now)
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
        guard case .ready(let minted) = pipeline.head() else { return nil }
        if minted.shed != nil {
            // Every shed delivery up to the next follow-up or probe, in one go (they are all past due).
            bookShed(pipeline.popShed(dueBy: min(follow, probe)))
            return nil
        }
        pipeline.pop()
        return deliveryRequest(minted.planned, body: minted.body, failure: minted.failure, at: now)
    }

    func takeBookedMissed() -> Int {
        defer { bookedMissed = 0 }
        return bookedMissed
    }

    /// Deliveries intended in the last whole second: the world turns the schedule's events per second
    /// into a varying number of deliveries, so the status line shows what was really due.
    func intendedRate(at elapsed: Duration) -> Double { Double(lastSecondCount) }

    private var currentSecond = 0
    private var currentSecondCount = 0
    private var lastSecondCount = 0

    private func countIntended(at t: Double) {
        let second = Int(t)
        if second != currentSecond {
            lastSecondCount = second == currentSecond + 1 ? currentSecondCount : 0
            currentSecond = second
            currentSecondCount = 0
        }
        currentSecondCount += 1
    }

    // MARK: Sending

    private func deliveryRequest(
        _ delivery: PlannedDelivery,
        body: [UInt8]?,
        failure: String?,
        at now: Double
    )
        -> LoadRequest?
    {
        if let only, delivery.action.appAccountToken != only { return nil }
        for fault in delivery.faults { faultCounts[fault.fault, default: 0] += 1 }
        if let failure {
            mintFailures.append("delivery \(delivery.id): \(failure)")
            history.write(event: "error", at: now, delivery: delivery, detail: failure)
            return nil
        }
        checker.sent(delivery, at: now)
        // The history says `send` only for what the engine really sent (see `handle`): here it says
        // what was handed to the engine, what happened without a request, and what could not be sent.
        guard delivery.sends else {
            history.write(event: "happen", at: now, delivery: delivery)
            return nil
        }
        guard let body else {
            history.write(event: "skip", at: now, delivery: delivery, detail: "nothing to send")
            return nil
        }
        if DeclaredOutages.fails(delivery, at: now, policy: policy) {
            failInDeclaredOutage(delivery, at: now)
            return nil
        }
        guard let role = Endpoints.role(of: delivery) else { return nil }
        let id = nextRequestID
        guard let (built, classification) = endpoints.request(for: delivery, body: body, id: id) else {
            let reason = role == .deviceReport ? "no device report endpoint" : "no device endpoint"
            checker.record(delivery, outcome: .notSent(reason: reason), at: now)
            history.write(event: "skip", at: now, delivery: delivery, detail: reason)
            return nil
        }
        var request = built
        // Deliveries meant to fail (forgeries, network faults, sends into a planned restart) get their
        // own kind, so the genuine traffic's error rate and latency stay readable and thresholds can
        // target either.
        if delivery.forgery != nil {
            request.kind = "forged"
        } else if delivery.network != nil {
            request.kind = "network-fault"
        } else if restartWindows.contains(now) {
            request.kind = "restart"
        }
        history.write(event: "dispatch", at: now, delivery: delivery, kind: request.kind)
        countIntended(at: now)
        nextRequestID += 1
        sent[id] = Sent(delivery: delivery, classification: classification)
        lastSend = now
        switch delivery.network {
        case .lostResponse?: request.hangUpOnResponse = true
        case .timeout?: request.timeout = .milliseconds(1)
        case .reset?: request.resetAfterBytes = body.count / 2  // a TCP RST partway through the request
        case nil: break
        }
        return request
    }

    /// Books runs of deliveries the pipeline shed (they could not be signed in time), never sent and never handed
    /// to the engine: the oracle books each as missed by the harness in bulk, a run under one lock (so a purchase
    /// never sent is not judged lost by the target), while the recorder, the engine's counters and the history
    /// count them per kind. Under overload most deliveries come this way, so nothing here renders a request, a
    /// string or a history line each.
    private func bookShed(_ runs: [ArraySlice<PlannedDelivery>]) {
        for var run in runs {
            if let only { run = ArraySlice(run.filter { $0.action.appAccountToken == only }) }
            // Consecutive deliveries that go to the oracle in one bulk booking.
            var bulk = run.startIndex
            for index in run.indices {
                let delivery = run[index]
                for fault in delivery.faults { faultCounts[fault.fault, default: 0] += 1 }
                // A shed delivery of a role without an endpoint is not missed: it would not have been sent.
                guard let role = Endpoints.role(of: delivery), endpoints.template(for: role) != nil else {
                    checker.bookMissed(run[bulk..<index], reason: shedReason)
                    bulk = index + 1
                    unreachable(delivery)
                    continue
                }
                countIntended(at: delivery.at)
                let second = Int(delivery.at)
                if second != shedTally.second { flushShed(nextSecond: second) }
                shedTally.count(delivery, kind: ShedTally.kind(of: delivery, role: role))
            }
            checker.bookMissed(run[bulk...], reason: shedReason)
        }
        for (kind, count) in shedTally.drainByKind() {
            recorder.recordMissed(kind: kind, count: count)
            bookedMissed += count
        }
    }

    /// A shed delivery of a role the target has no endpoint for: booked as dispatched and not sent, as when the
    /// pipeline keeps up.
    private func unreachable(_ delivery: PlannedDelivery) {
        let at = delivery.at
        checker.sent(delivery, at: at)
        guard let role = Endpoints.role(of: delivery) else { return }
        let reason = role == .deviceReport ? "no device report endpoint" : "no device endpoint"
        checker.record(delivery, outcome: .notSent(reason: reason), at: at)
        history.write(event: "skip", at: at, delivery: delivery, detail: reason)
    }

    /// Writes the shed counts of the current second to the history (one line per role and kind), and starts
    /// `nextSecond`'s. The run calls it once more after the engine stops.
    func flushShed(nextSecond: Int? = nil) {
        for line in shedTally.flush(nextSecond: nextSecond) {
            history.writeShed(
                second: line.second,
                role: line.role,
                kind: line.kind,
                count: line.count,
                detail: pipeline.shedReason
            )
        }
    }

    private func probeRequest(_ account: String, at now: Double, recoveryDown: Double? = nil) -> LoadRequest? {
        guard let url = endpoints.probeURL(for: account) else {
            recovery.answered(account)
            return nil
        }
        let id = nextRequestID
        nextRequestID += 1
        sent[id] = Sent(probeAccount: account, recoveryDown: recoveryDown)
        history.writeProbe(event: "dispatch", at: now, account: account)
        var request = LoadRequest(
            id: id,
            kind: "probe",
            method: "GET",
            url: url,
            headers: endpoints.probeRequestHeaders(for: account)
        )
        // The verdict rests on it: an overloaded harness sheds deliveries at its in-flight cap, not this.
        request.isPriority = true
        return request
    }

    /// Schedules a safety probe of every account that just had an Ask to Buy, a forgery or a refund.
    func scheduleSafetyProbes(at now: Double, delay: Double) {
        // After the schedule the final probe reads every account anyway.
        guard endpoints.probe != nil, now + delay <= probes.endOfSchedule else { return }
        for account in checker.drainAccountsOfInterest() where only == nil || account == only {
            _ = probes.schedule(account, at: now + delay)
        }
    }

    // MARK: Results

    /// Handles one result: history, metrics, the oracle, and follow-ups.
    func handle(_ result: LoadResult) {
        guard let what = sent.removeValue(forKey: result.id) else { return }
        sent.releaseBurstStorage()
        connectionWaits.record(result)
        let now = result.received.seconds
        let outcome = Endpoints.outcome(
            of: result,
            classification: what.classification ?? ResponseClassification(role: .deviceDelivery)
        )
        let wasSent: Bool = if case .notSent = outcome { false } else { true }
        unauthorized.record(result, at: now)
        if let account = what.probeAccount {
            if wasSent { history.writeProbe(event: "send", at: result.wireStart.seconds, account: account) }
            history.writeProbe(event: "result", at: now, account: account, result: result, sent: wasSent)
            if let down = what.recoveryDown {
                recovery.answered(account)
                handleRecoveryProbe(account, result: result, down: down, at: now)
            } else {
                handleProbe(account, result: result, at: now)
            }
            return
        }
        watchOutage(delivery: what.delivery, result: result, at: now)
        guard let delivery = what.delivery else { return }
        // Thresholds and error rates count what the role's classification says (a 409 "already had it" is
        // a success), not raw statuses.
        recorder.record(result, succeeded: outcome.isAcknowledged)
        deferred.record(result, outcome: outcome)
        if outcome.isAcknowledged && !(200..<300).contains(result.status) {
            acknowledgedOutside2xx["\(result.status / 100)xx", default: 0] += 1
        }
        checker.record(delivery, outcome: outcome, at: now)
        attempts?.record(delivery, result: result, outcome: outcome)
        followWindow(delivery, outcome: outcome, at: now)
        if wasSent { history.write(event: "send", at: result.wireStart.seconds, delivery: delivery) }
        history.write(event: "result", at: now, delivery: delivery, result: result, sent: wasSent)
        scheduleFollowUps(after: delivery, outcome: outcome, at: now)
    }

    /// Schedules what follows a delivery's outcome (retries, redeliveries, duplicates) up to the longest settle,
    /// and forgets its minted body once nothing waits to resend it.
    /// - Returns: whether a retry or redelivery of its chain follows.
    @discardableResult
    private func scheduleFollowUps(after delivery: PlannedDelivery, outcome: DeliveryOutcome, at now: Double) -> Bool {
        var next = policy.followUps(after: delivery, outcome: outcome, at: now)
        let continues = next.contains { $0.copy == .retry || $0.copy == .redelivery }
        let due = next.count
        next.removeAll { $0.at > endOfFollowUps }
        followUpsAfterSettle += due - next.count
        let key = delivery.sameBytesAs ?? delivery.id
        for follow in next { followUps.push(follow, at: follow.at) }
        if !next.isEmpty { waitingFor[key, default: 0] += next.count }
        if waitingFor[key] == nil { cache.forget(key) }
        // A planned copy (a concurrent or delayed duplicate) was minted under its own ID as well.
        if key != delivery.id { cache.forget(delivery.id) }
        return continues
    }

    /// Fails an App Store attempt due inside the App Store time a planned restart declares, without sending it:
    /// booked as refused, in the API's history as a socket issue, and retried on Apple's schedule.
    private func failInDeclaredOutage(_ delivery: PlannedDelivery, at now: Double) {
        let outcome = DeliveryOutcome.notSent(reason: DeclaredOutages.reason)
        faultCounts[DeclaredOutages.fault, default: 0] += 1
        checker.record(delivery, outcome: outcome, at: now)
        attempts?.record(delivery, at: now, result: DeclaredOutages.attemptResult)
        history.write(event: "skip", at: now, delivery: delivery, detail: DeclaredOutages.reason)
        declaredOutages.count(retried: scheduleFollowUps(after: delivery, outcome: outcome, at: now))
    }

    /// Puts off an App Store retry due while a planned restart has the target down, until it answers again.
    /// A restart lasts real seconds, which time compression does not shorten, while Apple's retries come hours
    /// apart: compressed, a whole schedule can fit inside one restart and a purchase made just before it would
    /// go unchecked, which no real restart causes. The first attempt still goes out and is refused; devices
    /// relaunch in real seconds and are not held.
    /// - Returns: whether the retry was put off (nothing is sent in this slot).
    private func holdsForRestart(_ delivery: PlannedDelivery, at now: Double) -> Bool {
        // Inside the App Store time a restart declares, Apple's attempts fail instead (`failInDeclaredOutage`).
        guard delivery.copy == .retry, restartWindows.contains(now), !policy.inDeclaredOutage(now) else {
            if !heldForRestart.isEmpty { heldForRestart.remove(delivery.id) }
            return false
        }
        if heldForRestart.insert(delivery.id).inserted { retriesHeldForRestart += 1 }
        let later = now + Self.restartPoll
        if later <= endOfFollowUps {
            var held = delivery
            held.at = later
            followUps.push(held, at: later)
            return true
        }
        // The restart outlasted the longest settle: the retry falls after it, as any late follow-up does.
        heldForRestart.remove(delivery.id)
        followUpsAfterSettle += 1
        let key = delivery.sameBytesAs ?? delivery.id
        if let waiting = waitingFor[key] { waitingFor[key] = waiting > 1 ? waiting - 1 : nil }
        if waitingFor[key] == nil { cache.forget(key) }
        return true
    }

    /// Reads after recovery for each planned restart whose window closed with the target answering, once:
    /// `now` is the engine's slot, or nil to read them at the time the target answered.
    private func noticeRecoveries(at now: Double?) {
        guard endpoints.probe != nil || commandProbes != nil, restartWindows.closed != windowsSeen else { return }
        let closed = restartWindows.closed(after: windowsSeen)
        windowsSeen += closed.count
        for window in closed where window.answered {
            readAfterRecovery(down: window.from, at: max(now ?? window.until, window.until))
        }
    }

    /// Queues a read of every account the target acknowledged deliveries of before `down` and no probe read since:
    /// HTTP probes go first in line and hold the accounts' follow-ups until they answer; a probe command reads
    /// them in a round of its own at once.
    private func readAfterRecovery(down: Double, at now: Double) {
        let accounts = checker.accountsAcknowledgedUnprobed(before: down).filter { only == nil || $0 == only }
        if let commandProbes, endpoints.probe == nil {
            commandProbes.recover(accounts, down: down)
        } else {
            recovery.targetBack(down: down, at: now, accounts: accounts)
        }
    }

    /// An outage outside the plan: connections of genuine deliveries refused, then answered again. The accounts
    /// acknowledged before the first refusal are read as after a planned restart.
    private func watchOutage(delivery: PlannedDelivery?, result: LoadResult, at now: Double) {
        guard endpoints.probe != nil || commandProbes != nil, let delivery, delivery.network == nil,
            delivery.forgery == nil
        else { return }
        if result.error == .refused {
            let at = result.sent.seconds
            if !restartWindows.contains(at) { recovery.refused(at: at) }
        } else if result.status > 0, let since = recovery.answered(at: now) {
            readAfterRecovery(down: since, at: now)
        }
    }

    /// Probes a sampled account a moment after the target acknowledged a change of its subscription's state, so a
    /// regression that a later delivery repairs is read while it lasts (command probes take it in their rounds).
    private func followWindow(_ delivery: PlannedDelivery, outcome: DeliveryOutcome, at now: Double) {
        guard endpoints.probe != nil, outcome.isAcknowledged, !delivery.isForged,
            checker.changesSubscriptionState(delivery), checker.followsWindows(delivery.action.appAccountToken)
        else { return }
        _ = probes.schedule(delivery.action.appAccountToken, at: now + Self.windowProbeDelay)
    }

    /// How long after an acknowledged subscription change its window probe goes, in seconds.
    private static let windowProbeDelay = 0.2

    /// The answer of a read after recovery: what the target acknowledged before it went down must show.
    private func handleRecoveryProbe(_ account: String, result: LoadResult, down: Double, at now: Double) {
        guard result.isSuccess else {
            // Down again, or limiting its rate: nothing read, and the final probe reads the account anyway.
            if result.status == 429 || result.status == 0 { return }
            checker.probeFailed(
                account: account,
                error: ProbeFailure("read after recovery answered \(result.status)"),
                at: now,
                final: false
            )
            return
        }
        check(account, body: result.body, asked: result.wireStart.seconds, at: now, down: down)
    }

    private func handleProbe(_ account: String, result: LoadResult, at now: Double) {
        if !result.isSuccess, result.status == 0, retryAfterRestart(account, sentAt: result.wireStart.seconds, at: now)
        {
            return
        }
        // A target that limits its rate said "not now": no state was read, so nothing is undecided (counted
        // so, a rate limit alone made runs end unknown); the final probe, which backs off, reads the account, and a
        // Retry-After holds the safety probes until then.
        if result.status == 429 {
            probes.rateLimited(account, retryAfter: result.retryAfter, at: now)
            return
        }
        guard result.isSuccess else {
            let reason =
                result.error.map { "\($0) \(result.detail)" } ?? "probe answered \(result.status)"
            checker.probeFailed(account: account, error: ProbeFailure(reason), at: now, final: false)
            return
        }
        // The target read the account between the probe's send and its answer.
        check(account, body: result.body, asked: result.wireStart.seconds, at: now, down: nil)
    }

    /// Checks a safety probe's answer (through the probe's `transform`, if it has one); `down`: a read after
    /// recovery from an outage that began then.
    private func check(_ account: String, body: [UInt8], asked: Double, at now: Double, down: Double?) {
        if let transformer {
            transformer.transform(account: account, body: body, at: now, asked: asked, down: down)
            return
        }
        do {
            let state = try decodeProbe(body, mapping: endpoints.probeMapping)
            if state.grants != nil { probeSawGrants = true }
            let results =
                if let down {
                    checker.checkAfterRecovery(account: account, state: state, at: now, asked: asked, down: down)
                } else {
                    checker.check(account: account, state: state, at: now, final: false, asked: asked)
                }
            note(results, at: now)
        } catch {
            checker.probeFailed(account: account, error: error, at: now, final: false)
        }
    }

    /// Probes the account again a second later when its safety probe got no answer during a planned restart:
    /// a backend the plan has taken down cannot say what it grants, and counting that as undecided checks let a
    /// correct backend's run end unknown. After the schedule the final probe reads every account anyway.
    /// - Returns: whether the probe was put off (nothing to record now).
    private func retryAfterRestart(_ account: String, sentAt: Double, at now: Double) -> Bool {
        guard restartWindows.contains(sentAt) || restartWindows.contains(now) else { return false }
        _ = probes.schedule(account, at: now + 1)
        return true
    }

    /// The report's lines on follow-ups that did not go out when first due: those after the longest settle, and
    /// App Store retries that waited for a planned restart.
    var followUpNotes: [String] {
        var lines: [String] = declaredOutages.note.map { [$0] } ?? []
        if followUpsAfterSettle > 0 {
            lines.append(
                "\(followUpsAfterSettle) retries or redeliveries fell after the longest settle (settleMaxSeconds) and "
                    + "were not sent"
            )
        }
        if retriesHeldForRestart > 0 {
            let one = retriesHeldForRestart == 1
            lines.append(
                "\(retriesHeldForRestart) App Store retr\(one ? "y" : "ies") due while a planned restart had the "
                    + "target down waited until it answered again: a restart lasts real seconds, which time "
                    + "compression does not shorten, and Apple's retries come hours apart"
            )
        }
        return lines
    }

    /// Remembers when each invariant first failed (the detection matrix reports it).
    func note(_ results: [CheckResult], at now: Double) {
        for result in results {
            if case .fail = result.outcome, firstDetection[result.invariant] == nil {
                firstDetection[result.invariant] = now
            }
        }
    }
}
