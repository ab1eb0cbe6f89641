import Chaos
import Checking
import Load
import Profile
import TargetProcesses

/// The request hook's part of sending: what the scheduler hands it, and what a failed hook leaves behind.
extension RunScheduler {
    /// Hands `request` to the hook when its role goes through it.
    /// - Returns: `request` itself when the role does not go through the hook, nil once handed, or the request
    ///   marked missed when the hook's in-flight cap is reached.
    func throughHook(
        _ request: consuming LoadRequest,
        delivery: PlannedDelivery,
        role: RequestRole,
        at now: Double
    )
        -> LoadRequest?
    {
        guard let hook, hook.handles(role) else { return request }
        let line = endpoints.hookRequest(for: delivery, request: request, role: role)
        return hook.hand(request, line: line, at: now)
    }

    /// Takes the hook's answers; once it has failed, books what it held as not sent (once) and says false, so
    /// nothing more is released.
    func hookWorks() -> Bool {
        guard let hook else { return true }
        hook.collect()
        guard hook.failure != nil else { return true }
        if !hookFailureBooked {
            hookFailureBooked = true
            let now = hook.clock()
            for id in hook.abandon() {
                guard let delivery = sent.removeValue(forKey: id)?.delivery else { continue }
                let reason = "not sent: the request hook failed before it answered"
                checker.record(delivery, outcome: .notSent(reason: reason), at: now)
                history.write(event: "skip", at: now, delivery: delivery, detail: reason)
            }
        }
        return false
    }

    /// Whether nothing but the hook is due by `now` (it woke the engine for a deadline): nothing is taken then.
    func onlyHookDue(by now: Double) -> Bool {
        guard hook != nil else { return false }
        let due = [pipelineAt, followUps.firstTime, probes.firstTime, recovery.firstTime].compactMap { $0 }.min()
        return (due ?? .infinity) > now + RequestHookStage.slack
    }
}
