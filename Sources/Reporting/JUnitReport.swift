import Foundation

/// `junit.xml`: one test case per invariant and per threshold, plus `run completed`, so CI systems
/// show which rule broke.
///
/// A failed invariant is always a `<failure>` carrying its first witnesses, even when part of it could
/// not be checked (that limitation goes into the message). Invariants that were not checked at all, or
/// could not decide, are skipped. The `run completed` case fails when the run was interrupted, so a
/// partial run never reads as green; the `interrupted` property says the same.
public enum JUnitReport {
    /// Renders the JUnit XML document for a report.
    public static func render(_ report: RunReport) -> String {
        let duration = String(format: "%.3f", report.endedAt.timeIntervalSince(report.startedAt))
        var failures = 0
        var skipped = 0
        var cases: [String] = []
        for invariant in report.invariants {
            cases.append(invariantCase(invariant, of: report, failures: &failures, skipped: &skipped))
        }
        for threshold in report.thresholds {
            cases.append(thresholdCase(threshold, failures: &failures, skipped: &skipped))
        }
        var completed = ""
        if report.interrupted {
            failures += 1
            completed =
                "<failure message=\"interrupted: the run stopped before it finished; its figures are partial\"/>"
        }
        cases.append("    <testcase classname=\"run\" name=\"run completed\">\(completed)</testcase>")
        let suiteName = Markup.escape("paystorm.\(report.profile)")
        // Only a run with a namespace of its own has the property, so other reports read as before.
        let namespace =
            report.namespace.map {
                "\n      <property name=\"namespace\" value=\"\(Markup.escape($0))\"/>"
            } ?? ""
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites name="paystorm" tests="\(cases.count)" failures="\(failures)" skipped="\(skipped)" time="\(duration)">
              <testsuite name="\(suiteName)" tests="\(cases.count)" failures="\(failures)" skipped="\(skipped)" time="\(duration)">
                <properties>
                  <property name="seed" value="\(report.seed)"/>\(namespace)
                  <property name="verdict" value="\(report.verdict.rawValue)"/>
                  <property name="invariantVerdict" value="\(report.invariantVerdict.rawValue)"/>
                  <property name="interrupted" value="\(report.interrupted)"/>
                  <property name="exitCode" value="\(report.exitCode)"/>
                  <property name="target" value="\(Markup.escape(report.target))"/>
                </properties>
            \(cases.joined(separator: "\n"))
              </testsuite>
            </testsuites>

            """
    }

    /// The test case of one invariant: a failure with its first witnesses, or skipped when it was not checked
    /// or could not decide.
    private static func invariantCase(
        _ invariant: InvariantResult,
        of report: RunReport,
        failures: inout Int,
        skipped: inout Int
    ) -> String {
        let name = Markup.escape(invariant.name)
        var body = ""
        switch invariant.status {
        case .passed:
            break
        case .failed:
            failures += 1
            let witnesses = report.violations.filter { $0.invariant == invariant.name }
            let text = witnesses.prefix(20).map { v in
                "\(v.concerns): \(v.summary)\n" + v.witness.map { "  - \($0)" }.joined(separator: "\n")
                    + "\n  replay: \(v.replay)"
            }.joined(separator: "\n\n")
            var message = "\(invariant.violations) violation(s)"
            if let first = witnesses.first { message += ": \(first.concerns): \(first.summary)" }
            if witnesses.isEmpty { message += " (no witness kept; see violations.jsonl)" }
            if let reason = invariant.reason { message += " [\(reason)]" }
            body = "<failure message=\"\(Markup.escape(message))\">\(Markup.escape(text))</failure>"
        case .unknown:
            skipped += 1
            body = "<skipped message=\"unknown: \(Markup.escape(invariant.reason ?? "ambiguous probes"))\"/>"
        case .unchecked:
            skipped += 1
            body = "<skipped message=\"unchecked: \(Markup.escape(invariant.reason ?? "no probe"))\"/>"
        }
        return "    <testcase classname=\"invariants\" name=\"\(name)\">\(body)</testcase>"
    }

    /// The test case of one threshold: a failure when breached, skipped when it could not be evaluated.
    private static func thresholdCase(_ threshold: ThresholdResult, failures: inout Int, skipped: inout Int) -> String {
        let name = Markup.escape(threshold.expression)
        var body = ""
        if let why = threshold.unknown {
            skipped += 1
            let message = "unknown: \(why) (observed \(threshold.observed))"
            body = "<skipped message=\"\(Markup.escape(message))\"/>"
        } else if !threshold.passed {
            failures += 1
            body = "<failure message=\"observed \(Markup.escape(threshold.observed))\"/>"
        }
        return "    <testcase classname=\"thresholds\" name=\"\(name)\">\(body)</testcase>"
    }
}
