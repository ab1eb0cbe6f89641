import Foundation
import Primitives
import Profile
import Reporting
import Testing

@testable import Checking
@testable import PayStorm

struct ReplayLineTests {
    /// A failed verdict with one violation, on account "A".
    static func oneViolation() -> Verdict {
        let witness = Witness(
            invariant: .noDoubleGrant,
            account: "A",
            at: 1,
            summary: "granted twice",
            entries: [],
            proof: "probe",
            observed: AccountState(),
            seed: 3
        )
        return Verdict(
            outcome: .fail,
            violations: [witness],
            violationCount: 1,
            tallies: [:],
            unknownSamples: [],
            unchecked: [],
            seed: 3
        )
    }

    @Test func plainWordsStayAsTheyAre() {
        #expect(shellQuoted("Profiles/smoke.json5") == "Profiles/smoke.json5")
        #expect(shellQuoted("TARGET=http://127.0.0.1:8080/v1") == "TARGET=http://127.0.0.1:8080/v1")
    }

    @Test func wordsWithSpacesOrQuotesAreQuotedForTheShell() {
        #expect(shellQuoted("TOKEN=a b") == "'TOKEN=a b'")
        #expect(shellQuoted("X=it's") == "'X=it'\\''s'")
        #expect(shellQuoted("") == "''")
    }

    /// The options that shape the world are on the line: a run at another rate, or one thinned at the source,
    /// generates another world than the profile's seed alone.
    @Test func replayLineCarriesTheRateScaleAndTheAdmissions() throws {
        var options = RunOptions(profilePath: "Profiles/smoke.json5")
        options.rateScale = 2.5
        options.flaws = ["double-grant"]
        let profile = try Profile.decode(Data(MintPipelineTests.profile.utf8), file: "pipeline.json5")
        let verdict = Self.oneViolation()
        let line = try #require(
            ReportBuilder.violations(
                verdict,
                profile: profile,
                options: options,
                admissionsPath: "/r/x y/admissions.csv"
            )
            .first?.replay
        )
        #expect(
            line
                == "paystorm replay Profiles/smoke.json5 --seed 3 --rate-scale 2.5 --admissions '/r/x y/admissions.csv' "
                + "--flaw double-grant --account A"
        )
        options.rateScale = 1
        let plain = ReportBuilder.violations(verdict, profile: profile, options: options).first?.replay
        #expect(plain == "paystorm replay Profiles/smoke.json5 --seed 3 --flaw double-grant --account A")
    }

    /// A capacity step runs the profile at a constant rate with a short settle: its world is another than the
    /// profile's schedule gives, so its lines name both, in numbers the command line reads back exactly.
    @Test func theReplayLineNamesAScheduleAndSettleInPlaceOfTheProfiles() throws {
        var options = RunOptions(profilePath: "p.json5")
        options.schedule = [RateSegment(.constant(rate: 12.5), seconds: 20)]
        options.settleSeconds = 1
        let profile = try Profile.decode(Data(MintPipelineTests.profile.utf8), file: "pipeline.json5")
        let line = ReportBuilder.violations(Self.oneViolation(), profile: profile, options: options).first?.replay
        #expect(line == "paystorm replay p.json5 --seed 3 --rate 12.5 --duration 20 --settle 1 --account A")
    }

    /// An external target trusts the PKI the run was given: a replay minted under another root is rejected
    /// (and `paystorm replay` refuses an external target without `--pki`).
    @Test func theReplayLineNamesThePKITheTargetTrusts() throws {
        var options = RunOptions(profilePath: "p.json5")
        options.pkiDirectory = "/keys/test pki"
        let profile = try Profile.decode(Data(MintPipelineTests.profile.utf8), file: "pipeline.json5")
        let line = ReportBuilder.violations(Self.oneViolation(), profile: profile, options: options).first?.replay
        #expect(line == "paystorm replay p.json5 --seed 3 --pki '/keys/test pki' --account A")
    }

    /// A violation seen by later probes again is one violation: its witness says how often and until when.
    @Test func aViolationSeenAgainSaysSoInItsWitness() throws {
        var verdict = Self.oneViolation()
        verdict.violations[0].sightings = 3
        verdict.violations[0].lastSeenAt = 12.5
        let profile = try Profile.decode(Data(MintPipelineTests.profile.utf8), file: "pipeline.json5")
        let options = RunOptions(profilePath: "p.json5")
        let violation = try #require(ReportBuilder.violations(verdict, profile: profile, options: options).first)
        #expect(violation.sightings == 3)
        #expect(violation.witness.last == "seen again by 2 later probes, the last at t=12.500s")
        let once = ReportBuilder.violations(Self.oneViolation(), profile: profile, options: options).first
        #expect(once?.sightings == nil)
        #expect(once?.witness == ["probe"])
    }

    @Test func theReplayLineNamesTheNamespace() throws {
        var profile = try Profile.decode(Data(MintPipelineTests.profile.utf8), file: "pipeline.json5")
        profile.namespace = 0x5A17
        let options = RunOptions(profilePath: "p.json5")
        let line = ReportBuilder.violations(Self.oneViolation(), profile: profile, options: options).first?.replay
        #expect(line == "paystorm replay p.json5 --seed \(profile.seed) --namespace 0000000000005a17 --account A")
    }
}
