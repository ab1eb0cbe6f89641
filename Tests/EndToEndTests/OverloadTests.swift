import Foundation
import HTTPServer
import PayStormTestKit
import Testing

/// A schedule far beyond what this machine can sign: the run thins it at the source, says so, and leaves the
/// admissions that let a replay generate the same world.
struct OverloadTests {
    /// 20,000 purchases a second for 3 s against a target that answers 200 at once: several times what two cores
    /// sign, on any machine this runs on.
    static func profile(port: UInt16) -> ProfileBuilder {
        let target = ProfileBuilder.Target(
            webhookURL: "http://127.0.0.1:\(port)/notifications",
            deviceURL: "http://127.0.0.1:\(port)/transactions",
            requestTimeoutSeconds: 5
        )
        var profile = ProfileBuilder(name: "overload", seed: 11, target: target)
        profile.groups = ["premium"]
        profile.products = [
            .init("coins", "consumable", priceMilli: 990),
            .init("gold", "autoRenewable", priceMilli: 9990, group: "premium", level: 1, periodSeconds: 30),
        ]
        profile.accounts = 50000
        profile.actionMix = ["consumable": 1, "subscribe": 1]
        profile.schedule = [.constant(rate: 20000, seconds: 3)]
        profile.settleSeconds = 0
        return profile
    }

    struct Summary: Decodable {
        struct Requests: Decodable { var intended: Int }
        struct Limit: Decodable {
            struct Actions: Decodable {
                var scheduled: Int
                var dropped: Int
            }
            var actions: Actions?
        }
        var requests: Requests
        var harnessLimited: Limit?
        var notes: [String]
    }

    static func summary(_ folder: String) throws -> Summary {
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/summary.json"))
        return try JSONDecoder().decode(Summary.self, from: data)
    }

    @Test func impossibleScheduleIsThinnedAtTheSourceAndReplaysFromItsAdmissions() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("overload-\(UUID())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        let server = try HTTPServer(threads: 2) { _ in HTTPResponse(status: 200) }
        defer { server.shutdown() }
        try Self.profile(port: server.port).write(into: work)
        #expect(try PayStormRunner.exec(["pki", "init", work + "/pki"]).0 == 0)
        let common = ["--quiet", "--no-history", "--pki", work + "/pki"]

        let (code, output) = try PayStormRunner.exec(
            ["run", work + "/profile.json5", "--reports", work + "/first"] + common
        )
        #expect([0, 2].contains(code), "\(output)")
        let first = try Self.summary(work + "/first/latest")
        let actions = try #require(first.harnessLimited?.actions, "\(first.notes)")
        #expect(actions.dropped > 0 && actions.dropped < actions.scheduled)
        #expect(actions.scheduled == 60_000)
        #expect(first.notes.contains { $0.contains("dropped at the source") && $0.contains("--admissions") })
        let admissions = work + "/first/latest/admissions.csv"
        #expect(try String(contentsOfFile: admissions, encoding: .utf8).hasPrefix("arrival,share\n"))

        // Played back, the admissions give the same world: the same actions dropped, the same deliveries intended
        // (the target answers every one, so no retry depends on timing).
        let (again, replayOutput) = try PayStormRunner.exec(
            ["run", work + "/profile.json5", "--reports", work + "/again", "--admissions", admissions] + common
        )
        #expect([0, 2].contains(again), "\(replayOutput)")
        let replayed = try Self.summary(work + "/again/latest")
        #expect(replayed.harnessLimited?.actions?.dropped == actions.dropped)
        #expect(replayed.requests.intended == first.requests.intended)
    }

    @Test func unreadableOrMalformedAdmissionsAreRefused() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("admissions-\(UUID())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        try "arrival,share\n12,0\n".write(toFile: work + "/bad.csv", atomically: true, encoding: .utf8)
        let run = ["run", "Profiles/smoke.json5", "--quiet", "--reports", work + "/reports", "--admissions"]
        let (missing, missingOutput) = try PayStormRunner.exec(run + [work + "/none.csv"])
        #expect(missing == 66, "\(missingOutput)")
        let (bad, badOutput) = try PayStormRunner.exec(run + [work + "/bad.csv"])
        #expect(bad == 65, "\(badOutput)")
        #expect(badOutput.contains("line 2"))
    }
}
