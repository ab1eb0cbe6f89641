import Foundation
import Primitives

/// `report.html`'s table of errors by class.
extension HTMLReport {
    /// The failures by class, then the sends missed and released late, each with its share of the intended
    /// requests and what it means: whether the target timed out, reset, refused or answered 4xx or 5xx, or
    /// PayStorm itself fell behind, read at a glance.
    static func errorsTable(_ requests: ReportedRequests) -> String {
        let intended = requests.counts.scheduled
        let rows = requests.errorsByClass + [("missed", requests.counts.missed), ("late", requests.late)]
        var html =
            "<h2>Errors by class</h2>\n"
            + "<table><tr><th>class</th><th>count</th><th>of intended</th><th>what it means</th></tr>\n"
        for (name, count) in rows {
            let share = intended > 0 ? String(format: "%.2f%%", 100 * Double(count) / Double(intended)) : ""
            html +=
                "<tr><td>\(Markup.escape(name))</td><td class=\"num\">\(count)</td><td class=\"num\">\(share)</td>"
                + "<td>\(Markup.escape(meaning(of: name)))</td></tr>\n"
        }
        return html + "</table>\n"
    }

    /// What a class of the table means, in a few words.
    private static func meaning(of name: String) -> String {
        if let known = meanings[name] { return known }
        if name.hasPrefix("http") { return "answered \(name.dropFirst(4)), not taken as an acknowledgment" }
        return "another failure"
    }

    private static let meanings = [
        "timeout": "no full answer within the request's timeout",
        "reset": "the connection was reset or closed before a full answer",
        "refused": "the target refused the connection (nothing listening)",
        "http4xx": "answered 4xx, not taken as an acknowledgment",
        "http5xx": "answered 5xx",
        "dns": "the host name did not resolve",
        "tls": "the TLS handshake or certificate check failed",
        "hung-up": "PayStorm hung up as the answer started (the lost-response fault)",
        "other": "another transport failure",
        "unsent": "its timeout ran out before it went on a connection (not counted as sent)",
        "missed": "never sent: PayStorm was behind its schedule or at its in-flight cap",
        "late": "sent after their intended time (also counted as sent)",
    ]
}
