import Foundation
import Load

/// The run's requests the target answered 401 or 403: it refused the credentials they carried, so they say
/// nothing about the purchases in them but that they went unprocessed.
///
/// Against a staging backend this is most often the harness's own doing (a token that expired an hour into a
/// soak, a wrong `target.headers`), and the errors alone would read as the backend's: the report says so in one
/// note, with the fix when the accounts' tokens were provisioned once.
struct UnauthorizedTally {
    /// Answers by request kind (`webhook`, `device`, `probe`).
    private(set) var counts: [String: Int] = [:]
    /// When the first one came, in seconds since the run's start.
    private(set) var first: Double?

    /// Counts `result` when it is a 401 or 403, by its request's kind.
    mutating func record(_ result: LoadResult, at now: Double) {
        guard result.status == 401 || result.status == 403 else { return }
        counts[result.kind, default: 0] += 1
        if first == nil { first = now }
    }

    /// One line for the report and the console, or nil when no request was refused so.
    /// - Parameter provisionedOnce: whether the accounts' fields came from a provisioning run once, without
    ///   `target.accounts.refreshSeconds`: then the line says how to keep them fresh.
    func note(provisionedOnce: Bool) -> String? {
        let total = counts.values.reduce(0, +)
        guard total > 0, let first else { return nil }
        let kinds = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        var line =
            "\(total) request\(total == 1 ? " was" : "s were") refused as unauthorized (HTTP 401 or 403: \(kinds)), "
            + "the first at t=\(String(format: "%.1f", first)) s: the target refused the credentials "
            + "\(total == 1 ? "it" : "they") carried (target.headers, a role's or the probe's headers, the accounts' "
            + "fields), so \(total == 1 ? "it was" : "they were") not processed"
        if provisionedOnce {
            line += "; tokens that expire during a run need target.accounts.refreshSeconds"
        }
        return line
    }
}
