import Foundation
import Testing

/// `paystorm run` with `target.appStoreAPI`: the run serves the App Store Server API from its world, leaves the CA
/// in its report folder and says where it served (issue 13, item 1). About 8 seconds.
struct RunAPICommandTests {
    static let profile = """
        { name: "run-api", seed: 9,
          target: {
            embeddedLedger: true,
            appStoreAPI: { listen: "127.0.0.1:0", publicKey: "${PUBLIC_KEY:-}", keyId: "K1",
                           faults: { notFoundSeconds: 1 } },
          },
          catalog: { products: [{ id: "coins", type: "consumable", priceMilli: 990 }] },
          population: { accounts: 10, devicesPerAccount: 1 },
          actionMix: { consumable: 1 },
          schedule: [{ kind: "constant", rate: 5, seconds: 3 }],
          settleSeconds: 1 }
        """

    static func write(_ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("run-api-\(UUID()).json5")
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test func runServesTheAPIFromItsWorldAndLeavesItsCA() throws {
        let profile = try Self.write(
            Self.profile.replacingOccurrences(of: #"publicKey: "${PUBLIC_KEY:-}", "#, with: "")
        )
        defer { try? FileManager.default.removeItem(at: profile) }
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-e2e-\(UUID())")
        defer { try? FileManager.default.removeItem(at: reports) }
        let (code, output) = try PayStormRunner.exec(["run", profile.path, "--quiet", "--reports", reports.path])
        #expect(code == 0, "\(output)")
        let folder = reports.appendingPathComponent("latest")
        let ca = try String(contentsOf: folder.appendingPathComponent("api-ca.pem"), encoding: .utf8)
        #expect(ca.hasPrefix("-----BEGIN CERTIFICATE-----"))
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("summary.json")))
                as? [String: Any]
        )
        let notes = summary["notes"] as? [String] ?? []
        let note = try #require(notes.first { $0.hasPrefix("app store server api served at https://127.0.0.1:") })
        // The world fed the API: every purchase of the run is known to it.
        let known = note.split(separator: ";").last?.split(separator: " ").first.flatMap { Int($0) } ?? 0
        #expect(known > 0, "\(note)")
    }

    @Test func unreadablePublicKeyStopsTheRunNamingTheField() throws {
        let profile = try Self.write(Self.profile)
        defer { try? FileManager.default.removeItem(at: profile) }
        let reports = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-e2e-\(UUID())")
        defer { try? FileManager.default.removeItem(at: reports) }
        let (code, output) = try PayStormRunner.exec([
            "run", profile.path, "--quiet", "--reports", reports.path, "--set", "PUBLIC_KEY=/nonexistent/key.pem",
        ])
        #expect(code == 66, "\(output)")
        let line = "\(profile.path): target.appStoreAPI.publicKey: cannot read /nonexistent/key.pem"
        #expect(output.contains(line), "\(output)")
    }
}
