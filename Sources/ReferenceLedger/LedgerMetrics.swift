import Synchronization

/// Counters for `GET /metrics`, in the Prometheus text format.
final class LedgerMetrics: Sendable {
    /// A route (one of the ledger's literals) and a status: a key without a string built per request.
    private struct RequestKey: Hashable, Comparable {
        var route: String
        var status: Int

        static func < (left: RequestKey, right: RequestKey) -> Bool {
            (left.route, left.status) < (right.route, right.status)
        }
    }

    private struct State {
        var requests: [RequestKey: Int64] = [:]
        var rejections: [String: Int64] = [:]
        var latencyBuckets = [Int64](repeating: 0, count: LedgerMetrics.bounds.count)
        var latencyCount: Int64 = 0
        var latencySum: Double = 0
    }

    /// Upper bounds (seconds) of the latency histogram.
    static let bounds: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private let state = Mutex(State())
    let grants = Atomic<Int64>(0)
    let duplicates = Atomic<Int64>(0)
    /// CPU nanoseconds spent verifying deliveries (from the first JWS of a delivery to its last), across threads.
    let verifyNanoseconds = Atomic<Int64>(0)
    let verifications = Atomic<Int64>(0)
    /// CPU nanoseconds spent handling POST requests (verification and commit included).
    let handleNanoseconds = Atomic<Int64>(0)
    /// SQLite transactions committed, the events they carried, and the time spent in them.
    let commits = Atomic<Int64>(0)
    let committedEvents = Atomic<Int64>(0)
    let commitNanoseconds = Atomic<Int64>(0)

    func request(route: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.requests[RequestKey(route: route, status: status), default: 0] += 1
            state.latencyCount += 1
            state.latencySum += seconds
            if let index = Self.bounds.firstIndex(where: { seconds <= $0 }) {
                state.latencyBuckets[index] += 1
            }
        }
    }

    func rejection(_ reason: String) {
        state.withLock { $0.rejections[reason, default: 0] += 1 }
    }

    /// The exposition text.
    func render(schemaVersion: Int) -> String {
        let snapshot = state.withLock { $0 }
        var text = ""
        text += "# HELP paystorm_ledger_requests_total HTTP requests by route and status.\n"
        text += "# TYPE paystorm_ledger_requests_total counter\n"
        for (key, count) in snapshot.requests.sorted(by: { $0.key < $1.key }) {
            text += "paystorm_ledger_requests_total{route=\"\(key.route)\",status=\"\(key.status)\"} \(count)\n"
        }
        text += "# HELP paystorm_ledger_rejections_total Refused inputs by reason.\n"
        text += "# TYPE paystorm_ledger_rejections_total counter\n"
        for (reason, count) in snapshot.rejections.sorted(by: { $0.key < $1.key }) {
            text += "paystorm_ledger_rejections_total{reason=\"\(reason)\"} \(count)\n"
        }
        text += "# HELP paystorm_ledger_grants_total Grants committed.\n"
        text += "# TYPE paystorm_ledger_grants_total counter\n"
        text += "paystorm_ledger_grants_total \(grants.load(ordering: .relaxed))\n"
        text += "# HELP paystorm_ledger_duplicates_total Deliveries recognised as already processed.\n"
        text += "# TYPE paystorm_ledger_duplicates_total counter\n"
        text += "paystorm_ledger_duplicates_total \(duplicates.load(ordering: .relaxed))\n"
        text += "# HELP paystorm_ledger_verify_seconds_total CPU time spent verifying JWS signatures and chains.\n"
        text += "# TYPE paystorm_ledger_verify_seconds_total counter\n"
        text += "paystorm_ledger_verify_seconds_total \(Double(verifyNanoseconds.load(ordering: .relaxed)) / 1e9)\n"
        text += "# HELP paystorm_ledger_verifications_total JWS verified (outer and nested).\n"
        text += "# TYPE paystorm_ledger_verifications_total counter\n"
        text += "paystorm_ledger_verifications_total \(verifications.load(ordering: .relaxed))\n"
        text += "# HELP paystorm_ledger_handle_seconds_total CPU time spent handling POST requests.\n"
        text += "# TYPE paystorm_ledger_handle_seconds_total counter\n"
        text += "paystorm_ledger_handle_seconds_total \(Double(handleNanoseconds.load(ordering: .relaxed)) / 1e9)\n"
        text += "# HELP paystorm_ledger_commits_total SQLite transactions committed (group commits).\n"
        text += "# TYPE paystorm_ledger_commits_total counter\n"
        text += "paystorm_ledger_commits_total \(commits.load(ordering: .relaxed))\n"
        text += "# HELP paystorm_ledger_committed_events_total Deliveries carried by those transactions.\n"
        text += "# TYPE paystorm_ledger_committed_events_total counter\n"
        text += "paystorm_ledger_committed_events_total \(committedEvents.load(ordering: .relaxed))\n"
        text += "# HELP paystorm_ledger_commit_seconds_total Time spent in SQLite transactions, fsync included.\n"
        text += "# TYPE paystorm_ledger_commit_seconds_total counter\n"
        text += "paystorm_ledger_commit_seconds_total \(Double(commitNanoseconds.load(ordering: .relaxed)) / 1e9)\n"
        text += "# HELP paystorm_ledger_request_duration_seconds Request handling time.\n"
        text += "# TYPE paystorm_ledger_request_duration_seconds histogram\n"
        var cumulative: Int64 = 0
        for (index, bound) in Self.bounds.enumerated() {
            cumulative += snapshot.latencyBuckets[index]
            text += "paystorm_ledger_request_duration_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        text += "paystorm_ledger_request_duration_seconds_bucket{le=\"+Inf\"} \(snapshot.latencyCount)\n"
        text += "paystorm_ledger_request_duration_seconds_sum \(snapshot.latencySum)\n"
        text += "paystorm_ledger_request_duration_seconds_count \(snapshot.latencyCount)\n"
        text += "# HELP paystorm_ledger_schema_version SQLite schema version (PRAGMA user_version).\n"
        text += "# TYPE paystorm_ledger_schema_version gauge\n"
        text += "paystorm_ledger_schema_version \(schemaVersion)\n"
        return text
    }
}
