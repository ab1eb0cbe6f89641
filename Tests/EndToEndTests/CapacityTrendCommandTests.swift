import Foundation
import PayStormTestKit
import Testing

/// `paystorm capacity trend` over fake nights' capacity folders: no search runs, only their capacity.json.
struct CapacityTrendCommandTests {
    /// A capacity folder named for its time, holding the parts of a capacity.json a trend reads.
    static func night(_ root: URL, _ name: String, outcome: String, knee: Double?, p99: Int) throws -> String {
        let folder = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let rate = knee.map { "\($0)" } ?? "null"
        let json = """
            {"schemaVersion": 1, "profile": "nightly", "seed": 7, "outcome": "\(outcome)",
             "sustainableRate": \(rate), "uslCeiling": 1200,
             "usl": {"sigma": 0.05, "kappa": 0, "lambda": 60, "rSquared": 0.98},
             "steps": [{"rate": \(knee ?? 100), "latency": {"p50": 1000, "p90": 2000, "p99": \(p99), "p999": 9000}}]}
            """
        try Data(json.utf8).write(to: folder.appendingPathComponent("capacity.json"))
        return folder.path
    }

    @Test func trendWritesTheNightsInDateOrderAndFailsWhenTheLatestKneeDropped() throws {
        try withTemporaryFolder("trend-e2e") { root in
            let latest = try Self.night(
                root,
                "20261203T020000Z-nightly-7-capacity",
                outcome: "sustainable",
                knee: 300,
                p99: 90_000
            )
            let first = try Self.night(
                root,
                "20261201T020000Z-nightly-7-capacity",
                outcome: "sustainable",
                knee: 500,
                p99: 80_000
            )
            let second = try Self.night(
                root,
                "20261202T020000Z-nightly-7-capacity",
                outcome: "neverBroke",
                knee: 480,
                p99: 70_000
            )
            let cut = try Self.night(
                root,
                "20261202T090000Z-nightly-7-capacity",
                outcome: "interrupted",
                knee: nil,
                p99: 0
            )
            let empty = root.appendingPathComponent("trend-of-nothing").path
            try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
            let out = root.appendingPathComponent("trend").path

            let (code, output) = try PayStormBinary.run([
                "capacity", "trend", latest, first, cut, second, empty, "--out", out,
            ])
            #expect(code == 1, "\(output)")
            #expect(
                output.contains("knee dropped: 300 actions/s on 20261203T020000Z-nightly-7-capacity is 38.8% below"),
                "\(output)"
            )
            #expect(output.contains("skipped \(cut): an interrupted search"), "\(output)")
            #expect(output.contains("skipped \(empty): no capacity.json"), "\(output)")
            let csv = try String(contentsOfFile: out + "/trend.csv", encoding: .utf8).split(separator: "\n")
            #expect(csv.count == 4, "\(csv)")
            #expect(
                csv.dropFirst().map { $0.split(separator: ",")[0] } == [
                    "2026-12-01T02:00:00Z", "2026-12-02T02:00:00Z", "2026-12-03T02:00:00Z",
                ]
            )
            #expect(
                csv.last
                    == "2026-12-03T02:00:00Z,20261203T020000Z-nightly-7-capacity,sustainable,300,60,0.05,0,1200,90000,\(latest)"
            )
            let html = try String(contentsOfFile: out + "/trend.html", encoding: .utf8)
            #expect(html.contains("<svg") && !html.contains("<script"))

            let (held, heldOutput) = try PayStormBinary.run([
                "capacity", "trend", latest, first, second, "--drop", "0.5", "--out", out,
            ])
            #expect(held == 0, "\(heldOutput)")
            #expect(heldOutput.contains("knee held: "), "\(heldOutput)")

            let (none, noneOutput) = try PayStormBinary.run(["capacity", "trend", empty, cut, "--out", out])
            #expect(none == 65, "\(noneOutput)")
            #expect(noneOutput.contains("none of the 2 folders given holds a capacity search"), "\(noneOutput)")

            let (usage, usageOutput) = try PayStormBinary.run(["capacity", "trend", latest, "--drop", "2"])
            #expect(usage == 64, "\(usageOutput)")
        }
    }
}
