import Foundation
import Primitives
import Testing

@testable import Profile

/// `${NAME}` and `${NAME:-default}` in a profile's string values, from `--set` or the environment.
struct VariablesTests {
    /// A profile with variables in nested objects, in an array of strings and in an array of objects.
    static let text = """
        {
          name: "${NAME:-vars}", seed: 1,
          target: {
            webhookURL: "http://127.0.0.1:${PORT}/notifications",
            headers: { "X-Api-Key": "${API_KEY:-none}", "X-Literal": "$${NOT_A_VARIABLE}" },
            probe: { kind: "command", command: ["sqlite3", "${DB}", "select '{appAccountToken}', '$5'"] },
          },
          catalog: { products: [{ id: "${PREFIX:-com.example}.coins", type: "consumable", priceMilli: 990 }] },
          population: { accounts: 10 },
          actionMix: { consumable: 1 },
          schedule: [{ kind: "constant", rate: 5, seconds: 10 }],
        }
        """

    static func decode(
        _ text: String = text,
        set: [String: String] = [:],
        environment: [String: String] = [:]
    ) throws -> Profile {
        try Profile.decode(
            Data(text.utf8),
            file: "vars.json5",
            variables: ProfileVariables(set: set, environment: environment)
        )
    }

    @Test func substitutesInNestedObjectsAndArrays() throws {
        let profile = try Self.decode(set: ["PORT": "8080", "DB": "/tmp/a b.db", "PREFIX": "app"])
        #expect(profile.target.webhookURL == "http://127.0.0.1:8080/notifications")
        #expect(profile.target.probe?.command == ["sqlite3", "/tmp/a b.db", "select '{appAccountToken}', '$5'"])
        #expect(profile.catalog.products.map(\.id) == ["app.coins"])
    }

    @Test func usesDefaultsWhenUnsetOrEmpty() throws {
        let profile = try Self.decode(set: ["PORT": "1", "DB": "d", "API_KEY": ""])
        #expect(profile.name == "vars")
        #expect(profile.target.headers["X-Api-Key"] == "none")
        #expect(profile.catalog.products.map(\.id) == ["com.example.coins"])
    }

    @Test func setWinsOverTheEnvironment() throws {
        let profile = try Self.decode(
            set: ["PORT": "9000"],
            environment: ["PORT": "7000", "DB": "env.db", "NAME": "from-env"]
        )
        #expect(profile.target.webhookURL == "http://127.0.0.1:9000/notifications")
        #expect(profile.target.probe?.command?[1] == "env.db")
        #expect(profile.name == "from-env")
    }

    @Test func headerValueWithALineBreakFromAVariableIsRefusedNamingTheHeader() throws {
        do {
            _ = try Self.decode(set: ["PORT": "1", "DB": "d", "API_KEY": "abc\r\nX-Evil: smuggled"])
            Issue.record("a CR/LF from --set reached target.headers")
        } catch let error as ProfileError {
            #expect(error.path == "target.headers.X-Api-Key", "\(error)")
            #expect(error.expected.contains("without control characters"), "\(error)")
            #expect(!error.description.contains("\n"), "one line: \(error)")
        }
    }

    @Test func aDefaultMayHoldVariables() throws {
        let text = Self.text.replacingOccurrences(
            of: "http://127.0.0.1:${PORT}/notifications",
            with: "${DEV:-http://127.0.0.1:${PORT}/y}"
        )
        let profile = try Self.decode(text, set: ["PORT": "81", "DB": "d"])
        #expect(profile.target.webhookURL == "http://127.0.0.1:81/y")
        let given = try Self.decode(text, set: ["DEV": "http://127.0.0.1:9/z", "DB": "d"])
        #expect(given.target.webhookURL == "http://127.0.0.1:9/z")
    }

    @Test func anEmptyPortIsRefusedNamingTheURL() {
        #expect {
            try Self.decode(set: ["PORT": "", "DB": "d"])
        } throws: { error in
            let error = error as? ProfileError
            return error?.path == "target.webhookURL" && error?.expected.contains("a port after ':'") == true
        }
    }

    @Test func doubleDollarEscapesALiteralReference() throws {
        let profile = try Self.decode(set: ["PORT": "1", "DB": "d", "NOT_A_VARIABLE": "oops"])
        #expect(profile.target.headers["X-Literal"] == "${NOT_A_VARIABLE}")
    }

    @Test func substitutedValuesAreValidatedAsWritten() throws {
        // A variable's value is checked like any value: a non-loopback host is still refused, with its path.
        #expect {
            _ = try Self.decode(
                Self.text.replacingOccurrences(of: "127.0.0.1", with: "${HOST}"),
                set: ["PORT": "1", "DB": "d", "HOST": "example.com"]
            )
        } throws: { error in
            "\(error)".contains("target.webhookURL") && "\(error)".contains("example.com")
        }
    }

    @Test func undefinedVariableNamesItAndItsPath() {
        #expect {
            _ = try Self.decode(set: ["DB": "d"])
        } throws: { error in
            guard let error = error as? ProfileError else { return false }
            return error.file == "vars.json5" && error.path == "target.webhookURL"
                && error.description.contains("${PORT}") && error.description.contains("--set PORT=")
        }
    }

    @Test func undefinedVariableInAnArrayNamesTheIndex() {
        #expect {
            _ = try Self.decode(set: ["PORT": "1"])
        } throws: { error in
            (error as? ProfileError)?.path == "target.probe.command[1]" && "\(error)".contains("${DB}")
        }
    }

    @Test(arguments: ["${}", "${1X}", "${A-B}", "${OPEN"])
    func malformedReferenceIsAnErrorWithItsPath(reference: String) {
        let text = Self.text.replacingOccurrences(of: "${NAME:-vars}", with: reference)
        #expect {
            _ = try Self.decode(text, set: ["PORT": "1", "DB": "d"])
        } throws: { error in
            (error as? ProfileError)?.path == "name" && "\(error)".contains("$${")
        }
    }

    @Test func numbersAndBooleansSurviveSubstitution() throws {
        let text = Self.text.replacingOccurrences(of: "seed: 1,", with: "seed: 9007199254740993, settleSeconds: 0.25,")
            .replacingOccurrences(
                of: "population: { accounts: 10 }",
                with: "population: { accounts: 10 }, thresholds: []"
            )
        let profile = try Self.decode(text, set: ["PORT": "1", "DB": "d"])
        #expect(profile.seed == 9_007_199_254_740_993)
        #expect(profile.settleSeconds == 0.25)
    }

    @Test func keysAreNotSubstituted() {
        let text = Self.text.replacingOccurrences(of: "name:", with: "\"${KEY}\":")
        #expect {
            _ = try Self.decode(text, set: ["PORT": "1", "DB": "d", "KEY": "name"])
        } throws: { error in
            "\(error)".contains("${KEY}")
        }
    }

    @Test(arguments: [
        ("PORT=8080", "PORT", "8080"), ("A=", "A", ""), ("_x1=a=b", "_x1", "a=b"),
    ])
    func parsesAssignments(text: String, name: String, value: String) {
        let parsed = ProfileVariables.assignment(text)
        #expect(parsed?.name == name)
        #expect(parsed?.value == value)
    }

    @Test(arguments: ["PORT", "=1", "1A=2", "A-B=1", "A B=1"])
    func refusesMalformedAssignments(text: String) {
        #expect(ProfileVariables.assignment(text) == nil)
    }
}

/// A numeric field given as exactly one `${NAME}` reference takes the variable's value as a number.
struct NumericVariablesTests {
    static let text = VariablesTests.text
        .replacingOccurrences(of: "rate: 5, seconds: 10", with: "rate: \"${RATE}\", seconds: \"${SECS:-10}\"")
        .replacingOccurrences(of: "accounts: 10", with: "accounts: \"${ACCOUNTS}\"")

    static func decode(_ set: [String: String]) throws -> Profile {
        try VariablesTests.decode(text, set: ["PORT": "1", "DB": "d"].merging(set) { $1 })
    }

    @Test func aNumericFieldTakesAVariableThatParsesAsANumber() throws {
        let profile = try Self.decode(["RATE": "12.5", "ACCOUNTS": "40"])
        #expect(profile.schedule.map(\.seconds) == [10])
        #expect(profile.population.accounts == 40)
        guard case .constant(rate: let rate) = profile.schedule.first?.shape else {
            Issue.record("not a constant segment")
            return
        }
        #expect(rate == 12.5)
    }

    @Test func aVariableThatDoesNotParseNamesTheFileFieldAndVariable() throws {
        do {
            _ = try Self.decode(["RATE": "fast", "ACCOUNTS": "40"])
            Issue.record("a non-numeric ${RATE} was accepted")
        } catch let error as ProfileError {
            #expect(error.path == "schedule[0].rate", "\(error)")
            #expect(error.description.hasPrefix("vars.json5: "), "\(error)")
            #expect(error.expected.contains("${RATE}") && error.expected.contains("\"fast\""), "\(error)")
        }
    }

    @Test func anIntegerFieldRefusesAFractionFromAVariable() throws {
        do {
            _ = try Self.decode(["RATE": "1", "ACCOUNTS": "2.5"])
            Issue.record("accounts took 2.5")
        } catch let error as ProfileError {
            #expect(error.path == "population.accounts", "\(error)")
            #expect(error.expected.contains("${ACCOUNTS}"), "\(error)")
        }
    }

    @Test func aLiteralStringOrAMixedStringIsStillNotANumber() throws {
        for rate in ["\"12\"", "\"${RATE}0\""] {
            let text = Self.text.replacingOccurrences(of: "\"${RATE}\"", with: rate)
            #expect(throws: ProfileError.self) {
                try VariablesTests.decode(text, set: ["PORT": "1", "DB": "d", "RATE": "1", "ACCOUNTS": "4"])
            }
        }
    }
}
