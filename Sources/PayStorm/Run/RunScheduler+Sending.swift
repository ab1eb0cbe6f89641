import Chaos
import Checking
import Foundation
import Load
import Profile
import Simulation

/// Sending: the requests the scheduler hands the engine, and what it books instead of sending.
extension RunScheduler {
    /// The request for a minted delivery, or nil when it is not sent (another account's in a replay, a failed
    /// mint, an action without a request, a role without a URL, a send into a declared outage), which is then
    /// recorded.
    func deliveryRequest(
        _ delivery: consuming PlannedDelivery,
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
        guard case (var request, let classification)? = endpoints.request(for: delivery, body: body, id: id) else {
            let reason = role == .deviceReport ? "no device report endpoint" : "no device endpoint"
            checker.record(delivery, outcome: .notSent(reason: reason), at: now)
            history.write(event: "skip", at: now, delivery: delivery, detail: reason)
            return nil
        }
        if let kind = failingKind(of: delivery, at: now) { request.kind = kind }
        let identity = history.writeDispatch(at: now, delivery: delivery, kind: request.kind)
        countIntended(at: now)
        nextRequestID += 1
        lastSend = now
        switch delivery.network {
        case .lostResponse?: request.hangUpOnResponse = true
        case .timeout?: request.timeout = .milliseconds(1)
        case .reset?: request.resetAfterBytes = body.count / 2  // a TCP RST partway through the request
        case nil: break
        }
        let handed = throughHook(request, delivery: delivery, role: role, at: now)
        // Last: the delivery moves into the table of what is in flight.
        sent[id] = Sent(delivery: delivery, classification: classification, identity: identity)
        return handed
    }

    /// The kind of a delivery meant to fail (a forgery, a network fault, a send into a planned restart), nil for
    /// a genuine one: its own kind keeps the genuine traffic's error rate and latency readable, and thresholds can
    /// target either.
    func failingKind(of delivery: PlannedDelivery, at now: Double) -> String? {
        if delivery.forgery != nil { return "forged" }
        if delivery.network != nil { return "network-fault" }
        return restartWindows.contains(now) ? "restart" : nil
    }

    /// Books runs of deliveries the pipeline shed (they could not be signed in time), never sent and never handed
    /// to the engine: the oracle books each as missed by the harness in bulk, a run under one lock (so a purchase
    /// never sent is not judged lost by the target), while the recorder, the engine's counters and the history
    /// count them per kind. Under overload most deliveries come this way, so nothing here renders a request, a
    /// string or a history line each.
    func bookShed(_ runs: [ArraySlice<PlannedDelivery>]) {
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
    func unreachable(_ delivery: PlannedDelivery) {
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

    func probeRequest(_ account: String, at now: Double, recoveryDown: Double? = nil) -> LoadRequest? {
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
}
