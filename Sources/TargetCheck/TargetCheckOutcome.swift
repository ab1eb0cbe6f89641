public import RunControl

/// One line of `paystorm target check`'s table: what was sent through one role, how the target answered, how
/// PayStorm classified the answer, what the probe then saw on the account, and a hint when it looks wrong.
public struct TargetCheckRow: Sendable, Hashable {
    /// The role: `webhook`, `deviceDelivery` or `deviceReport`.
    public var role: String
    /// What was sent: a genuine purchase, a duplicate, a forgery, a pending report.
    public var sends: String
    /// Method and URL, or why nothing was sent.
    public var request: String
    /// The HTTP status, or the transport error.
    public var status: String
    /// How the answer was classified (acknowledged, rejected, no answer, not sent).
    public var classified: String
    /// What the probe saw on the delivery's account afterwards.
    public var probe: String
    /// What to check when this row shows a problem.
    public var hint: String?
}

/// What `paystorm target check` found.
public struct TargetCheckOutcome: Sendable {
    /// The table, one row per request.
    public var rows: [TargetCheckRow]
    /// The target, in words.
    public var target: String
    /// The product bought and the accounts used.
    public var setup: String
    /// Further facts (no probe configured, a probe that failed).
    public var notes: [String]
    /// Whether the mapping works: the genuine purchase acknowledged and visible in the probe, the duplicate
    /// not granted twice, the forgery and the pending report not granted.
    public var passed: Bool
    /// The signal that stopped the check before it ended, if one did: what it had not reached is unknown.
    public var interruptedBy: StopSignal?

    /// The table and the result, as printed.
    public var text: String {
        let header = TargetCheckRow(
            role: "role",
            sends: "sends",
            request: "request",
            status: "status",
            classified: "classified",
            probe: "probe saw"
        )
        let all = [header] + rows
        func width(_ column: (TargetCheckRow) -> String) -> Int { all.map { column($0).count }.max() ?? 0 }
        let columns: [(TargetCheckRow) -> String] = [\.role, \.sends, \.request, \.status, \.classified]
        let widths = columns.map(width)
        var out = "target: \(target)\n\(setup)\n\n"
        for row in all {
            var line = ""
            for (column, width) in zip(columns, widths) {
                let cell = column(row)
                line += cell + String(repeating: " ", count: width - cell.count + 2)
            }
            out += line + row.probe + "\n"
            if let hint = row.hint { out += "  -> \(hint)\n" }
        }
        for note in notes { out += "note: \(note)\n" }
        let problems = rows.filter { $0.hint != nil }.count
        out +=
            interruptedBy.map { "\nresult: INTERRUPTED (\($0.name)), what the check had not reached is unknown\n" }
            ?? (passed
                ? "\nresult: PASS, the mapping works\n"
                : problems == 0
                    ? "\nresult: FAIL (see the notes)\n"
                    : "\nresult: FAIL, \(problems) problem\(problems == 1 ? "" : "s") (see the hints)\n")
        return out
    }
}

extension TargetCheckRow {
    /// The row of a step whose role has no URL: nothing was sent.
    init(notConfigured step: TargetCheck.Step) {
        self.init(
            role: step.role,
            sends: step.sends,
            request: "not configured",
            status: "-",
            classified: "-",
            probe: "-"
        )
    }
}
