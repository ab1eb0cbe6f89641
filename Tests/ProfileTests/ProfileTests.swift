import AppStoreModel
import Foundation
import Primitives
import Testing

@testable import Profile

struct ProfileTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let minimal = """
        {
          name: "t", seed: 1,
          target: { embeddedLedger: true },
          catalog: {
            groups: [{ id: "g", billingRetrySeconds: 10 }],
            products: [
              { id: "c", type: "consumable", priceMilli: 990 },
              { id: "s", type: "autoRenewable", group: "g", level: 1, priceMilli: 9990, periodSeconds: 5 },
            ],
          },
          population: { accounts: 10 },
          actionMix: { consumable: 1, subscribe: 1 },
          schedule: [{ kind: "constant", rate: 5, seconds: 10 }],
          faults: FAULTS,
        }
        """

    static func text(faults: String = "{}", replacing: (String, String)? = nil) -> String {
        var text = minimal.replacingOccurrences(of: "FAULTS", with: faults)
        if let (old, new) = replacing { text = text.replacingOccurrences(of: old, with: new) }
        return text
    }

    @Test(arguments: ["smoke", "detect", "nightly-chaos", "soak", "capacity", "forgery"])
    func loadsShippedProfile(name: String) throws {
        let path = Self.repository.appendingPathComponent("Profiles/\(name).json5").path
        let profile = try Profile.load(path: path)
        #expect(profile.name == name)
        #expect(profile.durationSeconds > 0)
    }

    @Test func decodesMinimalProfileWithDefaults() throws {
        let profile = try Profile.decode(Data(Self.text().utf8), file: "t.json5")
        #expect(profile.seed == 1)
        #expect(profile.settleSeconds == 10)
        #expect(profile.target.environment == .sandbox)
        #expect(profile.target.verifierOnlineChecks == false)
        #expect(profile.target.connections == 32)
        // Apple always sends data.appAppleId; outside Production the run writes `paystorm mint`'s default.
        #expect(profile.target.appAppleId == 1_234_567_890)
        #expect(profile.catalog.subscriptions(in: "g").map(\.id) == ["s"])
        #expect(profile.schedule.rate(at: 3) == 5)
        #expect(profile.schedule.rate(at: 11) == 0)
    }

    /// The run settles until quiet, from `settleSeconds` to `settleMaxSeconds` (a minute more unless said), and
    /// a `--settle` above the profile's longest raises it.
    @Test func theLongestSettleIsAMinuteMoreThanTheLeastUnlessSaid() throws {
        var profile = try Profile.decode(Data(Self.text().utf8), file: "t.json5")
        #expect(profile.settleMaxSeconds == nil)
        #expect(profile.longestSettleSeconds == 70)
        profile = try Profile.decode(
            Data(Self.text(replacing: ("faults: {},", "faults: {}, settleSeconds: 5, settleMaxSeconds: 5,")).utf8),
            file: "t.json5"
        )
        #expect(profile.longestSettleSeconds == 5)
        profile.settleSeconds = 30
        #expect(profile.longestSettleSeconds == 30)
    }

    @Test func appStoreRetriesAreOnWithApplesScheduleUnlessSwitchedOff() throws {
        let profile = try Profile.decode(Data(Self.text().utf8), file: "t.json5")
        #expect(profile.faults.appStoreRetries.enabled)
        #expect(profile.faults.appStoreRetries.scheduleHours == [1, 12, 24, 48, 72])
        let off = try Profile.decode(
            Data(Self.text(faults: "{ appStoreRetries: { enabled: false, scheduleHours: [0.5, 2] } }").utf8),
            file: "t.json5"
        )
        #expect(!off.faults.appStoreRetries.enabled)
        #expect(off.faults.appStoreRetries.scheduleHours == [0.5, 2])
    }

    struct BadCase: Sendable, CustomStringConvertible {
        var faults: String = "{}"
        var replacing: (String, String)? = nil
        var path: String
        var expectation: String
        var description: String { path }
    }

    static let badCases: [BadCase] = [
        BadCase(
            faults: "{ duplicate: { probability: 1.5 } }",
            path: "faults.duplicate.probability",
            expectation: "from 0 to 1, found 1.5"
        ),
        BadCase(faults: "{ duplicat: { probability: 0.5 } }", path: "faults.duplicat", expectation: "allowed keys"),
        BadCase(
            faults: "{ duplicate: { probability: \"high\" } }",
            path: "faults.duplicate.probability",
            expectation: "a number"
        ),
        BadCase(
            faults: "{ forgery: { probability: 0.1, kinds: [\"alg-none\", \"nope\"] } }",
            path: "faults.forgery.kinds[1]",
            expectation: "found \"nope\""
        ),
        BadCase(
            faults: "{ duplicate: { probability: 0.1, concurrent: 0.8, afterSuccess: 0.5 } }",
            path: "faults.duplicate.afterSuccess",
            expectation: "at most 1"
        ),
        BadCase(
            faults: "{ appStoreRetries: { scheduleHours: [1, 24, 12] } }",
            path: "faults.appStoreRetries.scheduleHours[2]",
            expectation: "ascending, above 0 and at most 8760, found 12"
        ),
        BadCase(
            faults: "{ appStoreRetries: { enabled: \"yes\" } }",
            path: "faults.appStoreRetries.enabled",
            expectation: "true or false"
        ),
        BadCase(
            replacing: ("rate: 5, seconds: 10", "rate: 0.0001, seconds: 2"),
            path: "schedule",
            expectation: "segments that start at least one action in all, found 0.0002"
        ),
        BadCase(
            replacing: ("type: \"consumable\"", "type: \"coin\""),
            path: "catalog.products[0].type",
            expectation: "one of consumable"
        ),
        BadCase(
            replacing: ("group: \"g\"", "group: \"h\""),
            path: "catalog.products[1].group",
            expectation: "the id of a group"
        ),
        BadCase(
            replacing: ("priceMilli: 990", "priceMilli: 9.5"),
            path: "catalog.products[0].priceMilli",
            expectation: "an integer"
        ),
        BadCase(
            replacing: ("priceMilli: 990", "priceMilli: -1"),
            path: "catalog.products[0].priceMilli",
            expectation: "found -1"
        ),
        BadCase(replacing: ("accounts: 10", "accounts: 0"), path: "population.accounts", expectation: "found 0"),
        BadCase(
            replacing: ("kind: \"constant\"", "kind: \"square\""),
            path: "schedule[0].kind",
            expectation: "one of constant"
        ),
        BadCase(
            replacing: ("rate: 5,", "rate: 5, from: 2,"),
            path: "schedule[0].from",
            expectation: "allowed keys are kind, seconds, rate"
        ),
        BadCase(
            replacing: ("embeddedLedger: true", "embeddedLedger: false"),
            path: "target.webhookURL",
            expectation: "an http(s) URL"
        ),
        BadCase(
            replacing: ("embeddedLedger: true", "webhookURL: \"http://staging.example.com/n\""),
            path: "target.webhookURL",
            expectation: "allowedHosts"
        ),
        BadCase(
            replacing: (
                "embeddedLedger: true", "embeddedLedger: true, probe: { kind: \"http\", url: \"http://127.0.0.1/a\" }"
            ),
            path: "target.probe.url",
            expectation: "{appAccountToken}"
        ),
        BadCase(replacing: ("seed: 1", "seed: 1, colour: 2"), path: "colour", expectation: "allowed keys"),
        BadCase(replacing: ("seed: 1,", ""), path: "seed", expectation: "an integer"),
        BadCase(
            replacing: ("actionMix: { consumable: 1, subscribe: 1 }", "actionMix: {}"),
            path: "actionMix",
            expectation: "at least one weight above 0"
        ),
        BadCase(
            replacing: ("actionMix: { consumable: 1, subscribe: 1 }", "actionMix: { nonRenewing: 1 }"),
            path: "actionMix.nonRenewing",
            expectation: "no nonRenewing product"
        ),
        BadCase(
            replacing: (
                "actionMix: { consumable: 1, subscribe: 1 }", "actionMix: { subscribe: 1, offerRedemption: 1 }"
            ),
            path: "actionMix.offerRedemption",
            expectation: "no catalog.products entry has a promotional offer"
        ),
        BadCase(
            replacing: ("actionMix: { consumable: 1, subscribe: 1 }", "actionMix: { subscribe: 1, upgrade: 1 }"),
            path: "actionMix.upgrade",
            expectation: "two or more autoRenewable levels"
        ),
        BadCase(
            replacing: ("actionMix: { consumable: 1, subscribe: 1 }", "actionMix: { subscribe: 1, refundReversal: 1 }"),
            path: "actionMix.refundReversal",
            expectation: "actionMix.refund is 0 and faults.refundMidStream is off"
        ),
        BadCase(
            replacing: ("actionMix: { consumable: 1, subscribe: 1 }", "actionMix: { consumable: 1, cancel: 1 }"),
            path: "actionMix.cancel",
            expectation: "actionMix.subscribe is 0"
        ),
        BadCase(
            replacing: (
                "actionMix: { consumable: 1, subscribe: 1 }", "actionMix: { consumable: 1, renewalExtension: 1 }"
            ),
            path: "actionMix.renewalExtension",
            expectation: "actionMix.subscribe is 0"
        ),
        BadCase(
            replacing: ("population: { accounts: 10 }", "population: { accounts: 10 }, thresholds: [42]"),
            path: "thresholds[0]",
            expectation: "threshold string"
        ),
        BadCase(
            replacing: (
                "{ id: \"c\", type: \"consumable\", priceMilli: 990 }",
                "{ id: \"c\", type: \"consumable\", priceMilli: 990, periodSeconds: 3 }"
            ),
            path: "catalog.products[0].periodSeconds",
            expectation: "no periodSeconds"
        ),
        BadCase(
            faults: "{ forgery: { probability: 0.1, kinds: [\"dates-in-seconds\", \"signed-date-before-chain\"] } }",
            replacing: ("embeddedLedger: true", "embeddedLedger: true, verifierOnlineChecks: true"),
            path: "faults.forgery.kinds",
            expectation: "a forgery a verifier with online checks rejects"
        ),
        BadCase(
            replacing: ("embeddedLedger: true", "embeddedLedger: true, verifierOnlineChecks: \"yes\""),
            path: "target.verifierOnlineChecks",
            expectation: "true or false"
        ),
        BadCase(
            replacing: ("embeddedLedger: true", "embeddedLedger: true, connections: 0"),
            path: "target.connections",
            expectation: "an integer from 1 to 1024"
        ),
        BadCase(
            replacing: ("faults: {},", "faults: {}, settleSeconds: 30, settleMaxSeconds: 20,"),
            path: "settleMaxSeconds",
            expectation: "at least settleSeconds (30), found 20"
        ),
    ]

    @Test(arguments: badCases)
    func rejectsBadValueNamingFilePathAndExpectation(bad: BadCase) {
        let text = Self.text(faults: bad.faults, replacing: bad.replacing)
        #expect(text != Self.text() || bad.faults != "{}")
        do {
            _ = try Profile.decode(Data(text.utf8), file: "bad.json5")
            Issue.record("decoded a bad profile")
        } catch let error as ProfileError {
            #expect(error.file == "bad.json5")
            #expect(error.path == bad.path, "\(error)")
            #expect(error.expected.contains(bad.expectation), "\(error)")
            #expect(error.description.hasPrefix("bad.json5: \(bad.path): expected "))
            #expect(!error.description.contains("\n"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func reportsSyntaxErrorAsDocumentError() {
        #expect(throws: ProfileError.self) { try Profile.decode(Data("{ name: ".utf8), file: "x.json5") }
    }

    @Test(arguments: [
        // (text, line, column, words the message must hold)
        ("{\n  name: \"t\",\n  seed: 1 2,\n}", 3, 11, "',' or '}'"),
        ("{\n  name: \"t\"\n  seed: 1,\n}", 3, 3, "',' or '}'"),
        ("{ name: \"t\", /* never closed", 1, 14, "'*/'"),
        ("{ name: \"unterminated\n}", 1, 22, "closing quote"),
        ("[1, 2,, 3]", 1, 7, "a value"),
        ("{ name: 'é', x: @ }", 1, 17, "'@'"),
        ("\u{0}\u{1}\u{2} not json5", 1, 1, "found the byte 0x00 (not text)"),
        ("{ x: \u{7F} }", 1, 6, "found the byte 0x7F (not text)"),
    ])
    func namesLineAndColumnOfASyntaxError(text: String, line: Int, column: Int, words: String) {
        let error = #expect(throws: ProfileError.self) { try Profile.decode(Data(text.utf8), file: "x.json5") }
        #expect(error?.line == line, "\(String(describing: error))")
        #expect(error?.column == column, "\(String(describing: error))")
        #expect(error?.expected.contains(words) == true, "\(String(describing: error))")
        #expect(error?.description.hasPrefix("x.json5:\(line):\(column): ") == true)
    }

    @Test(arguments: [
        ("name: \"t\", seed: 1,", "name: \"t\", seed: 1, name: \"u\",", "name", 2),
        (
            "target: { embeddedLedger: true }", "target: { embeddedLedger: true, 'embeddedLedger': false }",
            "target.embeddedLedger", 3
        ),
        (
            "{ id: \"c\", type: \"consumable\", priceMilli: 990 }",
            "{ id: \"c\", type: \"consumable\", priceMilli: 990, \"priceMilli\": 1 }", "catalog.products[0].priceMilli",
            7
        ),
    ])
    func refusesADuplicatedKeyNamingItsPathAndLine(old: String, new: String, path: String, line: Int) {
        // Before: the decoder kept one of the two values silently.
        let text = Self.text(replacing: (old, new))
        #expect(text != Self.text())
        let error = #expect(throws: ProfileError.self) { try Profile.decode(Data(text.utf8), file: "dup.json5") }
        #expect(error?.path == path, "\(String(describing: error))")
        #expect(error?.line == line, "\(String(describing: error))")
        #expect(error?.description.hasPrefix("dup.json5:\(line):") == true)
        #expect(error?.expected.contains("found '\(path.split(separator: ".").last ?? "")' again") == true)
    }

    @Test func scanAcceptsJSON5Features() {
        let text = """
            // a comment
            { unquoted: 1, 'single': 'it\\'s', "double": "a\\u00e9\\x41", trailing: [1, 2,], hex: 0xFF,
              /* block */ fraction: .5, point: 5., exponent: -1e+3, plus: +1, inf: -Infinity, nan: NaN,
              continued: "one \\
            two", $dollar_1: null, yes: true, no: false, nested: { a: { b: [] } }, }
            """
        #expect(JSON5Scan.firstProblem(in: Array(text.utf8)) == nil)
        // The decoder agrees that it is JSON5, so the scan refuses nothing the decoder accepts here.
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        #expect(throws: Never.self) { try decoder.decode(JSONValueProbe.self, from: Data(text.utf8)) }
    }

    @Test(arguments: ["smoke", "detect", "nightly-chaos", "soak", "capacity", "forgery"])
    func scanFindsNoProblemInShippedProfile(name: String) throws {
        let url = Self.repository.appendingPathComponent("Profiles/\(name).json5")
        #expect(JSON5Scan.firstProblem(in: Array(try Data(contentsOf: url))) == nil)
    }

    @Test func reportsMissingFile() {
        let error = #expect(throws: ProfileUnreadable.self) { try Profile.load(path: "/nonexistent/profile.json5") }
        #expect(error?.description == "cannot read profile /nonexistent/profile.json5: no such file")
    }

    @Test func reportsADirectoryAsUnreadableNotMalformed() {
        let error = #expect(throws: ProfileUnreadable.self) {
            try Profile.load(path: Self.repository.appendingPathComponent("Profiles").path)
        }
        #expect(error?.reason.contains("directory") == true)
    }

    @Test func keepsThresholdTextForTheEngineToParse() throws {
        let threshold = try JSONDecoder().decode([DeclaredThreshold].self, from: Data(#"["webhook.p99 < 250ms"]"#.utf8))
        #expect(threshold.first?.text == "webhook.p99 < 250ms")
        #expect(throws: (any Error).self) {
            try JSONDecoder().decode([DeclaredThreshold].self, from: Data(#"[""]"#.utf8))
        }
        #expect(throws: (any Error).self) { try JSONDecoder().decode([DeclaredThreshold].self, from: Data("[3]".utf8)) }
    }

    @Test(arguments: [
        (RateSegment(.ramp(from: 0, to: 10), seconds: 10), 5.0, 5.0),
        (RateSegment(.steps(from: 0, to: 30, count: 4), seconds: 40), 15.0, 10.0),
        (RateSegment(.spike(base: 1, peak: 9, atSeconds: 2, spikeSeconds: 1), seconds: 5), 2.5, 9.0),
        (RateSegment(.sine(mean: 10, amplitude: 5, periodSeconds: 4), seconds: 8), 1.0, 15.0),
    ])
    func evaluatesRateSegment(segment: RateSegment, at t: Double, rate: Double) {
        #expect(abs(segment.rate(at: t) - rate) < 1e-9)
    }

    /// A mix is refused only when nothing weighs: the total counts every action, the last declared too.
    @Test(arguments: ActionMix.keys)
    func actionMixTotalCountsEveryWeight(key: String) throws {
        let mix = try JSONDecoder().decode(ActionMix.self, from: Data(#"{"\#(key)": 2}"#.utf8))
        #expect(mix.total == 2)
    }

    @Test(arguments: [
        ("", Profile.keys), ("target", Target.keys), ("actionMix", ActionMix.keys), ("faults", Faults.keys),
        ("target.accounts", AccountsConfig.keys), ("target.probe", ProbeConfig.keys),
        ("target.requestHook", RequestHookConfig.keys),
    ])
    func schemaListsTheKeysTheDecoderAccepts(section: String, keys: [String]) throws {
        let url = Self.repository.appendingPathComponent("Profiles/profile.schema.json")
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var node = schema
        for key in section.split(separator: ".") {
            node = try #require((node["properties"] as? [String: Any])?[String(key)] as? [String: Any], "\(key)")
        }
        let properties = try #require(node["properties"] as? [String: Any])
        #expect(Set(properties.keys) == Set(keys))
        #expect(node["additionalProperties"] as? Bool == false)
    }
}

/// Accepts any JSON value, to ask the decoder whether a text is JSON5 at all.
private struct JSONValueProbe: Decodable {
    init(from decoder: any Decoder) throws {}
}
