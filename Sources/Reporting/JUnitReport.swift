import Foundation

/// `junit.xml`: one test case per invariant and per threshold, so CI systems
/// show which rule broke. Unchecked invariants are reported as skipped.
public enum JUnitReport {
    /// Renders the JUnit XML document for a report.
    public static func render(_ report: RunReport) -> String {
        let duration = String(format: "%.3f", report.endedAt.timeIntervalSince(report.startedAt))
        var cases: [String] = []
        var failures = 0
        var skipped = 0
        for invariant in report.invariants {
            let name = Markup.escape(invariant.name)
            var body = ""
            switch invariant.status {
            case .passed:
                break
            case .failed:
                failures += 1
                let witnesses = report.violations.filter { $0.invariant == invariant.name }
                let text = witnesses.prefix(20).map { v in
                    "account \(v.account): \(v.summary)\n" + v.witness.map { "  - \($0)" }.joined(separator: "\n")
                        + "\n  replay: \(v.replay)"
                }.joined(separator: "\n\n")
                body = "<failure message=\"\(invariant.violations) violation(s)\">\(Markup.escape(text))</failure>"
            case .unknown:
                skipped += 1
                body = "<skipped message=\"unknown: \(Markup.escape(invariant.reason ?? "ambiguous probes"))\"/>"
            case .unchecked:
                skipped += 1
                body = "<skipped message=\"unchecked: \(Markup.escape(invariant.reason ?? "no probe"))\"/>"
            }
            cases.append("    <testcase classname=\"invariants\" name=\"\(name)\">\(body)</testcase>")
        }
        for threshold in report.thresholds {
            let name = Markup.escape(threshold.expression)
            var body = ""
            if !threshold.passed {
                failures += 1
                body = "<failure message=\"observed \(Markup.escape(threshold.observed))\"/>"
            }
            cases.append("    <testcase classname=\"thresholds\" name=\"\(name)\">\(body)</testcase>")
        }
        let suiteName = Markup.escape("paystorm.\(report.profile)")
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites name="paystorm" tests="\(cases.count)" failures="\(failures)" skipped="\(skipped)" time="\(duration)">
              <testsuite name="\(suiteName)" tests="\(cases.count)" failures="\(failures)" skipped="\(skipped)" time="\(duration)">
                <properties>
                  <property name="seed" value="\(report.seed)"/>
                  <property name="verdict" value="\(report.verdict.rawValue)"/>
                  <property name="target" value="\(Markup.escape(report.target))"/>
                </properties>
            \(cases.joined(separator: "\n"))
              </testsuite>
            </testsuites>

            """
    }
}
