import Foundation
import PayStormTestKit
import Primitives
import Profile
import Testing

/// What the test kit's profile builder renders is a profile the loader accepts, with the values it was given.
@Suite struct ProfileBuilderTests {
    static func load(_ builder: ProfileBuilder) throws -> Profile {
        try Profile.decode(Data(builder.json5.utf8), file: "built.json5")
    }

    @Test func theDefaultsLoadAsASmallConsumableRun() throws {
        let profile = try Self.load(ProfileBuilder(name: "small", seed: 7, target: .embeddedLedger))
        #expect(profile.name == "small")
        #expect(profile.seed == 7)
        #expect(profile.target.embeddedLedger)
        #expect(profile.catalog.products.map(\.id) == ["c"])
        #expect(profile.population.accounts == 10)
        #expect(profile.schedule == [RateSegment(.constant(rate: 2), seconds: 2)])
    }

    @Test func everySettingLoadsWithItsValue() throws {
        var target = ProfileBuilder.Target(
            webhookURL: "http://127.0.0.1:8080/notifications",
            deviceURL: "http://127.0.0.1:8080/transactions",
            probeURL: "http://127.0.0.1:8080/accounts/{appAccountToken}",
            bundleId: "com.example.\"quoted\"",
            requestTimeoutSeconds: 2.5
        )
        target.probeIntervalSeconds = 0
        target.environment = "Sandbox"
        var builder = ProfileBuilder(name: "everything", seed: 4242, target: target)
        builder.groups = ["premium"]
        builder.products = [
            .init("coins", "consumable", priceMilli: 990),
            .init("gold", "autoRenewable", priceMilli: 9990, group: "premium", level: 1, periodSeconds: 30),
        ]
        builder.accounts = 24
        builder.devicesPerAccount = 2
        builder.actionMix = ["consumable": 2, "subscribe": 0.5]
        builder.schedule = [.constant(rate: 8, seconds: 4), .ramp(from: 1, to: 3, seconds: 2)]
        builder.faults = ["duplicate": "{ probability: 0.2 }"]
        builder.settleSeconds = 2
        builder.settleMaxSeconds = 5
        builder.thresholds = ["errorRate < 50%"]
        builder.extra = ["timeCompression: { secondsPerMonth: 30 }"]
        let profile = try Self.load(builder)
        #expect(profile.target.webhookURL == "http://127.0.0.1:8080/notifications")
        #expect(profile.target.deviceURL == "http://127.0.0.1:8080/transactions")
        #expect(profile.target.probe != nil)
        #expect(profile.target.bundleId == "com.example.\"quoted\"")
        #expect(profile.target.requestTimeoutSeconds == 2.5)
        #expect(profile.catalog.groups.map(\.id) == ["premium"])
        #expect(profile.catalog.products.map(\.periodSeconds).last == 30)
        #expect(profile.population.devicesPerAccount == 2)
        #expect(profile.actionMix.consumable == 2 && profile.actionMix.subscribe == 0.5)
        #expect(profile.durationSeconds == 6)
        #expect(profile.faults.duplicate?.probability == 0.2)
        #expect(profile.settleSeconds == 2 && profile.settleMaxSeconds == 5)
        #expect(profile.thresholds == [DeclaredThreshold("errorRate < 50%")])
        #expect(profile.timeCompression.secondsPerMonth == 30)
    }

    @Test func writtenProfilesLoadFromTheirFile() throws {
        let file = try ProfileBuilder(name: "written", seed: 1, target: .embeddedLedger).writeToTemporaryFolder(
            "builder"
        )
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        #expect(try Profile.load(path: file.path).name == "written")
    }
}
