import Chaos
import Checking
import Foundation
import Load
import Profile
import Simulation

/// Results: what each answer means for the history, the oracle and the follow-ups, safety probes and reads after
/// recovery.
extension RunScheduler {
    /// Handles one result: history, metrics, the oracle, and follow-ups.
    func handle(_ result: LoadResult) {
        guard var what = sent.removeValue(forKey: result.id) else { return }
        sent.releaseBurstStorage()
        connectionWaits.record(result)
        let now = result.received.seconds
        // Taken out of `what` (moved, not copied): a delivery's fields would take a retain each.
        let outcome = Endpoints.outcome(
            of: result,
            classification: what.classification.take() ?? ResponseClassification(role: .deviceDelivery)
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
        guard let delivery = what.delivery.take() else { return }
        watchOutage(delivery: delivery, result: result, at: now)
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
        // The delivery's fields come as its `dispatch` line rendered them, not read from it again.
        if wasSent { history.write(event: "send", at: result.wireStart.seconds, identity: what.identity) }
        history.write(event: "result", at: now, identity: what.identity, result: result, sent: wasSent)
        scheduleFollowUps(after: delivery, outcome: outcome, at: now)
    }

    /// Schedules what follows a delivery's outcome (retries, redeliveries, duplicates) up to the longest settle,
    /// and forgets its minted body once nothing waits to resend it.
    /// - Returns: whether a retry or redelivery of its chain follows.
    @discardableResult
    func scheduleFollowUps(after delivery: PlannedDelivery, outcome: DeliveryOutcome, at now: Double) -> Bool {
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
    func failInDeclaredOutage(_ delivery: PlannedDelivery, at now: Double) {
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
    func holdsForRestart(_ delivery: PlannedDelivery, at now: Double) -> Bool {
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
    func noticeRecoveries(at now: Double?) {
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
    func readAfterRecovery(down: Double, at now: Double) {
        let accounts = checker.accountsAcknowledgedUnprobed(before: down).filter { only == nil || $0 == only }
        if let commandProbes, endpoints.probe == nil {
            commandProbes.recover(accounts, down: down)
        } else {
            recovery.targetBack(down: down, at: now, accounts: accounts)
        }
    }

    /// An outage outside the plan: connections of genuine deliveries refused, then answered again. The accounts
    /// acknowledged before the first refusal are read as after a planned restart.
    func watchOutage(delivery: PlannedDelivery, result: LoadResult, at now: Double) {
        guard endpoints.probe != nil || commandProbes != nil, delivery.network == nil, delivery.forgery == nil
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
    func followWindow(_ delivery: PlannedDelivery, outcome: DeliveryOutcome, at now: Double) {
        guard endpoints.probe != nil, outcome.isAcknowledged, !delivery.isForged,
            checker.changesSubscriptionState(delivery), checker.followsWindows(delivery.action.appAccountToken)
        else { return }
        _ = probes.schedule(delivery.action.appAccountToken, at: now + Self.windowProbeDelay)
    }

    /// How long after an acknowledged subscription change its window probe goes, in seconds.
    static let windowProbeDelay = 0.2

    /// The answer of a read after recovery: what the target acknowledged before it went down must show.
    func handleRecoveryProbe(_ account: String, result: LoadResult, down: Double, at now: Double) {
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

    func handleProbe(_ account: String, result: LoadResult, at now: Double) {
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
    func check(_ account: String, body: [UInt8], asked: Double, at now: Double, down: Double?) {
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
    func retryAfterRestart(_ account: String, sentAt: Double, at now: Double) -> Bool {
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
