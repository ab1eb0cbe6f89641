import Foundation
import Primitives
import Testing

@testable import Profile

/// A `${NAME}` reference that is a whole string value takes the type its field expects (boolean, number, a number
/// in an array), while a string field keeps the variable's text.
struct TypedVariablesTests {
    /// Booleans, numbers in nested objects and in an array, and string fields, each from a variable.
    static let text = """
        {
          name: "${NAME:-typed}", seed: 1,
          target: {
            webhookURL: "http://127.0.0.1:8080/notifications",
            bundleId: "${BUNDLE:-com.example.app}",
            headers: { "X-Count": "${COUNT:-1}" },
            verifierOnlineChecks: "${ONLINE:-false}",
          },
          catalog: {
            products: [
              { id: "coins", type: "consumable", priceMilli: 990 },
              { id: "pro", type: "nonConsumable", priceMilli: "${PRICE:-4990}", familyShareable: "${FAMILY}" },
            ],
          },
          population: { accounts: 10 },
          actionMix: { consumable: 1, nonConsumable: 1 },
          schedule: [{ kind: "spike", base: 1, peak: "${PEAK:-5}", atSeconds: 2, spikeSeconds: "${SPIKE:-1}", seconds: 10 }],
          faults: {
            crashBeforeFinish: { probability: "${CRASH:-0.1}" },
            appStoreRetries: { enabled: "${RETRIES:-true}", scheduleHours: [1, "${SECOND_RETRY:-12}", 24] },
          },
          thresholds: ["p99 < ${P99:-250}ms"],
        }
        """

    static func decode(_ set: [String: String], text: String = text) throws -> Profile {
        try VariablesTests.decode(text, set: set)
    }

    /// The error a load gives, or nil when it loads.
    static func error(_ set: [String: String], text: String = text) -> ProfileError? {
        do {
            _ = try decode(set, text: text)
            return nil
        } catch {
            return error as? ProfileError
        }
    }

    @Test(arguments: [("true", true), ("false", false)])
    func aBooleanFieldTakesTrueOrFalseFromAVariable(value: String, expected: Bool) throws {
        let profile = try Self.decode(["FAMILY": value, "RETRIES": value, "ONLINE": value])
        #expect(profile.catalog.products.last?.familyShareable == expected)
        #expect(profile.faults.appStoreRetries.enabled == expected)
        #expect(profile.target.verifierOnlineChecks == expected)
    }

    @Test func embeddedLedgerTakesABooleanFromAVariable() throws {
        let text = Self.text.replacingOccurrences(
            of: "webhookURL: \"http://127.0.0.1:8080/notifications\",",
            with: "embeddedLedger: \"${EMBEDDED}\","
        )
        #expect(try Self.decode(["FAMILY": "false", "EMBEDDED": "true"], text: text).target.embeddedLedger)
        // false takes effect too: without the ledger the profile needs a webhook URL.
        let error = Self.error(["FAMILY": "false", "EMBEDDED": "false"], text: text)
        #expect(error?.path == "target.webhookURL", "\(String(describing: error))")
    }

    @Test func numbersInNestedObjectsAndArraysTakeVariables() throws {
        let profile = try Self.decode(
            ["FAMILY": "true", "PEAK": "40", "SPIKE": "0.5", "CRASH": "0.25", "SECOND_RETRY": "6", "PRICE": "1990"]
        )
        #expect(profile.schedule.first?.shape == .spike(base: 1, peak: 40, atSeconds: 2, spikeSeconds: 0.5))
        #expect(profile.faults.crashBeforeFinish?.probability == 0.25)
        #expect(profile.faults.appStoreRetries.scheduleHours == [1, 6, 24])
        #expect(profile.catalog.products.last?.priceMilli == 1990)
    }

    @Test func aStringFieldKeepsTheVariablesText() throws {
        let profile = try Self.decode(
            ["FAMILY": "true", "NAME": "42", "BUNDLE": "true", "COUNT": "007", "P99": "1.50"]
        )
        #expect(profile.name == "42")
        #expect(profile.target.bundleId == "true")
        #expect(profile.target.headers["X-Count"] == "007")
        #expect(profile.thresholds.map(\.text) == ["p99 < 1.50ms"])
    }

    @Test(arguments: [
        ("FAMILY", "maybe", "catalog.products[1].familyShareable", "true or false"),
        ("RETRIES", "1", "faults.appStoreRetries.enabled", "true or false"),
        ("ONLINE", "TRUE", "target.verifierOnlineChecks", "true or false"),
        ("SECOND_RETRY", "soon", "faults.appStoreRetries.scheduleHours[1]", "a number"),
        ("PEAK", "abc", "schedule[0].peak", "a number"),
        ("PRICE", "4.5", "catalog.products[1].priceMilli", "an integer"),
    ])
    func aValueThatDoesNotFitNamesTheFileFieldVariableAndExpectation(
        name: String,
        value: String,
        path: String,
        expected: String
    ) throws {
        let error = try #require(Self.error(["FAMILY": "true"].merging([name: value]) { $1 }))
        #expect(error.path == path, "\(error)")
        #expect(error.description.hasPrefix("vars.json5: \(path): expected \(expected)"), "\(error)")
        #expect(error.expected.contains("${\(name)") && error.expected.contains("\"\(value)\""), "\(error)")
    }

    @Test func anUnsetVariableInABooleanFieldKeepsItsError() throws {
        let error = try #require(Self.error([:]))
        #expect(error.path == "catalog.products[1].familyShareable", "\(error)")
        #expect(error.expected.contains("a value for ${FAMILY}: pass --set FAMILY=VALUE"), "\(error)")
    }

    @Test func aMixedStringInAnArrayOfNumbersIsStillNotANumber() throws {
        let text = Self.text.replacingOccurrences(of: "\"${SECOND_RETRY:-12}\"", with: "\"${SECOND_RETRY:-12}h\"")
        let error = try #require(Self.error(["FAMILY": "true"], text: text))
        #expect(error.path == "faults.appStoreRetries.scheduleHours[1]", "\(error)")
    }
}
