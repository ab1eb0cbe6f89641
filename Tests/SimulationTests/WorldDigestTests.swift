import Foundation
import PayStormTestKit
import Profile
import Simulation
import Testing

/// Pins the action stream of every shipped profile (and of the test profile that plays every lifecycle): a
/// digest of the first actions' fields for a fixed seed and start, so any change in generated worlds, even one
/// byte of one payload, fails here. Set RECORD_SNAPSHOTS=1 to rewrite Snapshots/world-digests.txt (never on
/// CI), and only for a change of behaviour meant as one.
struct WorldDigestTests {
    /// How many actions of each stream the digest covers.
    static let prefix = 5_000

    static let profilesDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Profiles")

    /// FNV-1a, 64 bits: stable across processes, unlike `Hasher`, which is seeded per process.
    static func fnv1a(_ text: String, into hash: inout UInt64) {
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01B3
        }
    }

    /// An action's description in terms that do not depend on how Simulation stores its payloads: every field
    /// of the action and its truth, then the Apple payloads its delivery signs (AppStoreModel's values, every
    /// field, absent ones included), so a change of representation that signs the same bytes keeps the digest.
    static func canonical(_ action: Action) -> String {
        var rest = action
        rest.delivery = .marker
        var text = String(describing: rest)
        switch action.delivery {
        case .notification(let notification):
            text += " notification " + String(describing: notification.payload)
            text += " " + String(describing: notification.transaction?.payload)
            text += " " + String(describing: notification.renewal)
        case .device(let device):
            text += " device \(device.device) \(device.source) " + String(describing: device.transaction.payload)
        case .report(let report):
            text += " report " + String(describing: report)
        case .marker:
            text += " marker"
        }
        return text
    }

    /// One line: the stream's name, how many actions the prefix held, and the digest of their canonical
    /// descriptions.
    static func digestLine(name: String, profile: Profile) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        var count = 0
        for action in World(profile: profile, startMillis: start).prefix(prefix) {
            fnv1a(canonical(action) + "\n", into: &hash)
            count += 1
        }
        return "\(name) \(count) \(String(hash, radix: 16))"
    }

    static func currentDigests() throws -> String {
        let files = try FileManager.default.contentsOfDirectory(atPath: profilesDirectory.path)
            .filter { $0.hasSuffix(".json5") }.sorted()
        // Profiles substitute no variables from the environment here, so the digests do not depend on it.
        let variables = ProfileVariables(set: [:], environment: [:])
        var lines = try files.map { file in
            let path = profilesDirectory.appendingPathComponent(file).path
            return digestLine(name: file, profile: try Profile.load(path: path, variables: variables))
        }
        lines.append(digestLine(name: "rich (SimulationTests)", profile: try richProfile()))
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func shippedProfilesGenerateTheRecordedWorlds() throws {
        let text = try Self.currentDigests()
        try expectSnapshot(text, named: "world-digests.txt")
        #expect(text.split(separator: "\n").count >= 7)
    }
}
