import Foundation
import Testing

@testable import Profile

/// `population.withoutAccountTokenFraction`: parsed strictly, 0 unless said, refused where it cannot be checked.
struct AccountTokenSettingTests {
    static func profile(population: String, target: String = #"webhookURL: "http://127.0.0.1:9/n""#) -> String {
        ProfileTests.text(replacing: ("population: { accounts: 10 }", "population: \(population)"))
            .replacingOccurrences(of: "target: { embeddedLedger: true }", with: "target: { \(target) }")
    }

    @Test func everyPurchaseCarriesATokenUnlessSaid() throws {
        let profile = try Profile.decode(Data(Self.profile(population: "{ accounts: 10 }").utf8), file: "t.json5")
        #expect(profile.population.withoutAccountTokenFraction == 0)
        let share = Self.profile(population: "{ accounts: 10, withoutAccountTokenFraction: 0.3 }")
        #expect(try Profile.decode(Data(share.utf8), file: "t.json5").population.withoutAccountTokenFraction == 0.3)
    }

    @Test(arguments: [
        ("{ accounts: 10, withoutAccountTokenFraction: 1.5 }", "a number from 0 to 1, found "),
        ("{ accounts: 10, withoutAccountTokenFraction: -0.1 }", "a number from 0 to 1, found "),
        ("{ accounts: 10, withoutAccountTokenFraction: \"half\" }", "number"),
    ])
    func refusesAShareThatIsNotAFraction(population: String, expected: String) {
        let text = Self.profile(population: population)
        #expect(text.contains("withoutAccountTokenFraction"))
        do {
            _ = try Profile.decode(Data(text.utf8), file: "bad.json5")
            Issue.record("decoded a bad share")
        } catch let error as ProfileError {
            #expect(error.description.hasPrefix("bad.json5: population.withoutAccountTokenFraction: expected "))
            #expect(error.expected.contains(expected), "\(error)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    /// The embedded ledger knows a purchase's account only by its token: a share there would fail a correct
    /// target, so the profile is refused.
    @Test func refusesAShareWithTheEmbeddedLedger() {
        let text = Self.profile(
            population: "{ accounts: 10, withoutAccountTokenFraction: 0.2 }",
            target: "embeddedLedger: true"
        )
        do {
            _ = try Profile.decode(Data(text.utf8), file: "bad.json5")
            Issue.record("decoded a share with the embedded ledger")
        } catch let error as ProfileError {
            #expect(error.path == "population.withoutAccountTokenFraction", "\(error)")
            #expect(error.expected.contains("embeddedLedger"), "\(error)")
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}
