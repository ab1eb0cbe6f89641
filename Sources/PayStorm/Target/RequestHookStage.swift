import Foundation
import Load
import Profile
import TargetProcesses

/// The request hook on the engine's thread: the run hands it each rendered request of the hook's roles, and takes
/// back, in any order, the requests to send, released at their own intended times (so their latency counts the
/// hook's time, as a device's would count its signing).
///
/// At most `maxInFlight` requests await an answer; one due while the cap is reached is missed. The first failure
/// (the hook gone, a line that is not an answer to a request awaiting one, an answer later than the timeout, the
/// hook's own refusal) ends the stage: nothing more is handed to it or released from it, and the run stops.
final class RequestHookStage {
    /// A request handed to the hook and not answered yet.
    struct Awaiting {
        var request: LoadRequest
        var line: RequestHookRequest
        /// The intended time, in seconds since the run's start.
        var at: Double
        /// When it was handed (monotonic ns), for the hook's time.
        var handed: Int64
        /// When its answer is late, in seconds since the run's start.
        var deadline: Double
    }

    let process: RequestHookProcess
    let config: RequestHookConfig
    /// Seconds since the run's start.
    let clock: () -> Double
    private(set) var awaiting: [Int: Awaiting] = [:] {
        didSet { earliestKnown = false }
    }
    /// The earliest deadline of ``awaiting``, kept between changes: the engine asks for it on every turn.
    private var earliest: Double?
    private var earliestKnown = true
    /// Answered requests, by intended time.
    private var ready = TimeHeap<LoadRequest>()
    /// The hook's time per answered request, in microseconds.
    private(set) var time = Histogram()
    /// Why the stage ended, as one line naming the hook.
    private(set) var failure: String?

    init(process: RequestHookProcess, config: RequestHookConfig, clock: @escaping () -> Double) {
        self.process = process
        self.config = config
        self.clock = clock
    }

    /// Whether requests of `role` go through the hook.
    func handles(_ role: RequestRole) -> Bool { config.roles.contains(role) }

    /// Hands `request` (its rendered parts in `line`) to the hook.
    /// - Returns: nil once handed; the request marked missed when the hook's in-flight cap is reached.
    func hand(_ request: LoadRequest, line: RequestHookRequest, at intended: Double) -> LoadRequest? {
        guard awaiting.count < config.maxInFlight else {
            var missed = request
            missed.missedReason = "request hook in-flight cap \(config.maxInFlight) reached"
            return missed
        }
        awaiting[request.id] = Awaiting(
            request: request,
            line: line,
            at: intended,
            handed: RequestHookProcess.monotonicNanoseconds(),
            deadline: max(intended, clock()) + config.timeoutSeconds
        )
        process.send(line.line)
        return nil
    }

    /// Takes the hook's answers, checks the oldest request's deadline, and notes the first failure.
    func collect() {
        guard failure == nil else { return }
        let (answers, gone) = process.drain()
        for received in answers {
            guard failure == nil else { return }
            switch received.answer {
            case .success(let answer): take(answer, at: received.at)
            case .failure(let error): fail("answered garbage: \(error)")
            }
        }
        if failure == nil, let gone {
            fail("\(gone), with \(awaiting.count) request\(awaiting.count == 1 ? "" : "s") awaiting its answer")
        }
        if failure == nil { checkDeadlines() }
    }

    private func take(_ answer: RequestHookAnswer, at received: Int64) {
        guard let entry = awaiting.removeValue(forKey: answer.id) else {
            fail("answered garbage: id \(answer.id) is not a request awaiting its answer")
            return
        }
        if let refusal = answer.error {
            fail("refused request \(answer.id) (\(entry.line.role)): \(refusal)")
            return
        }
        let applied: RequestHookRequest
        do {
            applied = try answer.applied(to: entry.line)
        } catch {
            fail("answered garbage: \(error)")
            return
        }
        time.record(max(1, (received - entry.handed) / 1000))
        ready.push(Endpoints.request(entry.request, answered: applied), at: entry.at)
    }

    /// Fails on the oldest request past its deadline; a deadline reached early on the run's clock (the engine
    /// woke a little before the wall clock got there) is kept for the next look.
    private func checkDeadlines() {
        let now = clock()
        guard let first = earliestDeadline, first <= now,
            let late = awaiting.values.min(by: { $0.deadline < $1.deadline })
        else { return }
        let waited = Double(RequestHookProcess.monotonicNanoseconds() - late.handed) / 1e9
        guard waited >= config.timeoutSeconds else {
            awaiting[late.request.id]?.deadline = now + config.timeoutSeconds - waited
            return
        }
        fail(
            "did not answer request \(late.request.id) (\(late.line.role)) within "
                + String(format: "%g s", config.timeoutSeconds)
        )
    }

    private func fail(_ what: String) {
        failure = "the request hook (\(process.label)) \(what)"
    }

    /// The earliest time the stage needs the engine: an answered request's intended time, or the oldest
    /// deadline (just after it, so the engine's look finds it passed); nil when neither.
    var nextDue: Double? {
        guard failure == nil else { return nil }
        return [ready.firstTime, earliestDeadline.map { $0 + 0.001 }].compactMap { $0 }.min()
    }

    /// How much later than the time the engine asks for a thing may be and still count as due: intended times
    /// reach the engine, and come back, as whole nanoseconds, so a time the stage gave may return a hair earlier.
    static let slack = 1e-6

    /// The earliest deadline of the requests awaiting an answer, computed again only after a change.
    private var earliestDeadline: Double? {
        if !earliestKnown {
            earliest = awaiting.values.lazy.map(\.deadline).min()
            earliestKnown = true
        }
        return earliest
    }

    /// The intended time of the earliest answered request, nil when none waits.
    var readyAt: Double? { failure == nil ? ready.firstTime : nil }

    /// The earliest answered request, when one is due by `now`.
    func popReady(dueBy now: Double) -> LoadRequest? {
        guard failure == nil, let first = ready.firstTime, first <= now + Self.slack else { return nil }
        return ready.pop()
    }

    /// The ids of the requests handed and never released (awaiting an answer, or answered after the failure),
    /// emptied: the run books them as not sent.
    func abandon() -> [Int] {
        var ids = Array(awaiting.keys)
        awaiting.removeAll()
        while let request = ready.pop() { ids.append(request.id) }
        return ids.sorted()
    }

    /// The hook's time as the report's latency figures (`all`, measure `hook`), nil when it answered nothing.
    var figures: LatencyFigures? {
        time.isEmpty ? nil : LatencyFigures(kind: "all", measure: "hook", histogram: time)
    }
}
