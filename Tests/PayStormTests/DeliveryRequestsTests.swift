import Chaos
import Foundation
import Load
import Minting
import Profile
import RunControl
import Signing
import Simulation
import Testing

@testable import PayStorm
@testable import TargetProcesses

/// Each delivery's request from its role's template, the answer's classification into the oracle's outcome,
/// and account provisioning (issue 9, items 1–3).
struct DeliveryRequestsTests {
    static func profile(target: String) throws -> Profile {
        let text = ProfileText.minimal.replacingOccurrences(of: "TARGET", with: target)
        return try Profile.decode(Data(text.utf8), file: "t.json5")
    }

    static let target = """
        { webhookURL: "http://127.0.0.1:1/n",
          deviceDelivery: {
            method: "PUT", url: "http://127.0.0.1:1/users/{account.id}/iap?p={productId}",
            headers: { Authorization: "Bearer {account.token}", "content-type": "application/vnd.x+json" },
            body: { receipt: "{signedTransaction}", user: "{account.id}" },
            responses: { alreadyHad: [409], body: [{ status: 200, pointer: "/granted", equals: false, means: "rejected" }] },
          },
          accounts: { provision: ["true"] } }
        """

    static func endpoints(_ profile: Profile, accounts: AccountDirectory) throws -> Endpoints {
        var endpoints = Endpoints(
            webhook: try #require(profile.target.webhook),
            deviceDelivery: profile.target.deviceDelivery,
            deviceReport: profile.target.deviceReport,
            probe: "http://127.0.0.1:1/wallet/{account.id}",
            headers: [(name: "X-Key", value: "k")],
            probeMapping: nil
        )
        endpoints.accounts = accounts
        return endpoints
    }

    @Test func deviceDeliveryIsShapedByItsTemplate() throws {
        let profile = try Self.profile(target: Self.target)
        let token = World.appAccountToken(seed: profile.seed, account: 0)
        let accounts = AccountDirectory([token.lowercased(): ["id": "u 1", "token": "secret"]])
        let endpoints = try Self.endpoints(profile, accounts: accounts)
        let minter = Minter(pki: try TestPKI.generate())
        let bodies = DeliveryBodies(minter: minter, endpoints: endpoints)
        let stream = ChaosStream(World(profile: profile, startMillis: 1_800_000_000_000), profile: profile)
        let delivery = try #require(
            stream.first {
                if case .device = $0.action.delivery {
                    $0.action.appAccountToken == token && $0.forgery == nil
                } else {
                    false
                }
            }
        )
        let role = try #require(Endpoints.role(of: delivery))
        let template = try #require(endpoints.template(for: role))
        let head = endpoints.head(for: delivery, template: template)
        let productId = try #require(delivery.action.transaction?.productId)
        #expect(head.method == "PUT")
        #expect(head.url == "http://127.0.0.1:1/users/u%201/iap?p=\(productId)")
        #expect(head.headers.map(\.name) == ["X-Key", "Authorization", "content-type"])
        #expect(head.headers.first { $0.name == "Authorization" }?.value == "Bearer secret")
        let body = try #require(try bodies.body(for: delivery))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: String])
        #expect(object["user"] == "u 1")
        #expect(object["receipt"]?.split(separator: ".").count == 3)
        #expect(endpoints.probeURL(for: token) == "http://127.0.0.1:1/wallet/u%201")
    }

    /// An account whose token the backend dictated, buying without a token: its device's request still names it
    /// by its provisioned fields, and the signed transaction carries no `appAccountToken` at all.
    @Test func aTokenlessPurchaseOfADictatedAccountIsNamedByItsProvisionedFields() throws {
        var profile = try Self.profile(target: Self.target)
        profile.population.withoutAccountTokenFraction = 1
        let minted = World.appAccountToken(seed: profile.seed, account: 0)
        let dictated = "e5c9a1f4-3b2d-5c6e-8f70-1a2b3c4d5e6f"
        profile.dictatedTokens = [0: dictated]
        let accounts = AccountDirectory(
            [dictated: ["id": "u 1", "token": "secret"]],
            dictatedTokens: [minted: dictated]
        )
        let endpoints = try Self.endpoints(profile, accounts: accounts)
        let bodies = DeliveryBodies(minter: Minter(pki: try TestPKI.generate()), endpoints: endpoints)
        let stream = ChaosStream(World(profile: profile, startMillis: 1_800_000_000_000), profile: profile)
        let delivery = try #require(
            stream.first {
                if case .device = $0.action.delivery { $0.action.account == 0 && $0.forgery == nil } else { false }
            }
        )
        #expect(delivery.action.appAccountToken == dictated)
        let head = endpoints.head(for: delivery, template: try #require(endpoints.template(for: .deviceDelivery)))
        #expect(head.url.hasPrefix("http://127.0.0.1:1/users/u%201/iap"))
        #expect(head.headers.first { $0.name == "Authorization" }?.value == "Bearer secret")
        let body = try #require(try bodies.body(for: delivery))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: String])
        let payload = try #require(object["receipt"]?.split(separator: ".").dropFirst().first)
        var base64 = payload.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        let claims = String(decoding: try #require(Data(base64Encoded: base64)), as: UTF8.self)
        #expect(claims.contains("\"transactionId\""))
        #expect(!claims.contains("appAccountToken"), "\(claims)")
    }

    @Test func aProbeCarriesTheAccountsOwnHeadersOverTheTargets() throws {
        let profile = try Self.profile(target: Self.target)
        var endpoints = try Self.endpoints(profile, accounts: AccountDirectory(["a": ["id": "7", "token": "s\r\n"]]))
        #expect(endpoints.probeRequestHeaders(for: "A").map(\.name) == ["X-Key"])
        endpoints.probeHeaders = [
            .init(name: "Authorization", value: try TemplateString("Bearer {account.token}")),
            .init(name: "x-key", value: try TemplateString("{appAccountToken.lower}")),
        ]
        let headers = endpoints.probeRequestHeaders(for: "A")
        #expect(headers.map(\.name) == ["Authorization", "x-key"])
        // A header value never carries a line break: a field cannot add a header of its own.
        #expect(headers.map(\.value) == ["Bearer s", "a"])
    }

    @Test func contractV1BodiesAndHeadersAreUnchanged() throws {
        let profile = try Self.profile(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", deviceURL: \"http://127.0.0.1:1/t\" }"
        )
        let endpoints = try Self.endpoints(profile, accounts: AccountDirectory())
        let stream = ChaosStream(World(profile: profile, startMillis: 1_800_000_000_000), profile: profile)
        let delivery = try #require(stream.first { if case .device = $0.action.delivery { true } else { false } })
        let head = endpoints.head(for: delivery, template: try #require(endpoints.deviceDelivery))
        #expect(head.method == "POST" && head.url == "http://127.0.0.1:1/t")
        #expect(head.headers.map(\.name) == ["Content-Type", "X-Key"])
        let minter = Minter(pki: try TestPKI.generate())
        let body = try #require(try DeliveryBodies(minter: minter, endpoints: endpoints).body(for: delivery))
        #expect(String(decoding: body, as: UTF8.self).hasPrefix(#"{"signedTransaction":""#))
        #expect(endpoints.deviceReport?.url.text == "http://127.0.0.1:1/t")
    }

    static func result(_ status: Int, _ body: String = "", error: LoadErrorClass? = nil) -> LoadResult {
        LoadResult(
            id: 0,
            kind: "device",
            intended: .zero,
            sent: .zero,
            wireStart: .zero,
            received: .zero,
            status: status,
            body: Array(body.utf8),
            error: error
        )
    }

    @Test func answersAreClassifiedPerRoleIntoTheOraclesOutcome() throws {
        let responses = try #require(try Self.profile(target: Self.target).target.deviceDelivery).responses
        let table: [(LoadResult, DeliveryOutcome)] = [
            (Self.result(200), .acknowledged(status: 200)),
            (Self.result(409), .acknowledged(status: 409, alreadyHad: true)),
            (Self.result(200, #"{"granted": false}"#), .rejected(status: 200)),
            (Self.result(500), .rejected(status: 500)),
            (Self.result(429), .deferred(status: 429)),
            (Self.result(0, error: .refused), .notSent(reason: "refused: ")),
            (Self.result(0, error: .timeout), .indeterminate(reason: "timeout: ")),
        ]
        for (result, outcome) in table {
            #expect(Endpoints.outcome(of: result, classification: responses) == outcome, "\(result.status)")
        }
        // Contract v1's webhook: Apple's 200–206 only.
        let webhook = ResponseClassification(role: .webhook)
        #expect(Endpoints.outcome(of: Self.result(207), classification: webhook) == .rejected(status: 207))
    }

    @Test func theEmbeddedLedgersReportThatCreditedNothingIsReadAsAlreadyHad() throws {
        let report = try TargetSetup.embeddedReport(url: "http://127.0.0.1:1/transactions").responses
        let nothing = Self.result(202, #"{"granted":0,"status":"recorded"}"#)
        let credited = Self.result(202, #"{"granted":1,"status":"recorded"}"#)
        #expect(Endpoints.outcome(of: nothing, classification: report) == .acknowledged(status: 202, alreadyHad: true))
        #expect(Endpoints.outcome(of: credited, classification: report) == .acknowledged(status: 202))
        // A copy the transport resent after its connection closed unanswered: the target may have credited the
        // first copy, so its "already had it" is no proof that nothing was credited.
        var resent = nothing
        resent.resent = true
        #expect(Endpoints.outcome(of: resent, classification: report) == .acknowledged(status: 202))
        // Nor is a refusal of the copy sent again a refusal of the purchase: the first copy went unanswered.
        var refused = Self.result(409)
        refused.resent = true
        let webhook = ResponseClassification(role: .webhook)
        guard case .indeterminate(let reason) = Endpoints.outcome(of: refused, classification: webhook) else {
            Issue.record("a refused resent copy should be indeterminate")
            return
        }
        #expect(reason.hasSuffix("the copy sent again was answered 409"))
        refused.resent = false
        #expect(Endpoints.outcome(of: refused, classification: webhook) == .rejected(status: 409))
        // Only the report role: a signed delivery's answer keeps contract v1's reading.
        #expect(ResponseClassification(role: .deviceDelivery).body.isEmpty)
    }

    // MARK: Provisioning

    static func script(_ text: String) throws -> (path: String, directory: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("provision-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/provision.sh"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return (path, directory)
    }

    @Test func provisioningReadsEachAccountsFieldsMatchingTokensInAnyCase() throws {
        let (path, directory) = try Self.script(
            #"""
            # Echo each token lowercased with an id and a token; skip the second account.
            n=0
            while IFS= read -r line; do
              n=$((n+1))
              token=$(printf '%s' "$line" | sed 's/.*"appAccountToken":"\([^"]*\)".*/\1/' | tr 'A-Z' 'a-z')
              [ "$n" = 2 ] && continue
              printf '{"appAccountToken": "%s", "id": "user-%d", "token": "tok-%d"}\n' "$token" "$n" "$n"
            done
            """#
        )
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tokens = (0..<3).map { World.appAccountToken(seed: 9, account: $0) }
        let accounts = try AccountProvisioning.run(
            ["/bin/sh", path],
            tokens: tokens,
            timeout: 20,
            interruption: Interruption()
        )
        #expect(accounts.count == 2)
        #expect(accounts.fields(of: tokens[0]) == ["id": "user-1", "token": "tok-1"])
        #expect(accounts.fields(of: tokens[1]) == ["id": tokens[1]])
        #expect(accounts.fields(of: tokens[2].lowercased())["id"] == "user-3")
    }

    /// A command that leaves a process behind holding its standard output (a daemon it starts) is done when it
    /// exits: the run used to wait for the process it left, and failed when that outlived the timeout.
    @Test func provisioningReadsTheOutputOfACommandThatLeavesAProcessBehind() throws {
        let (path, directory) = try Self.script(
            #"""
            read -r line
            token=$(printf '%s' "$line" | sed 's/.*"appAccountToken":"\([^"]*\)".*/\1/')
            printf '{"appAccountToken": "%s", "id": "user-1"}\n' "$token"
            sleep 8 &
            echo $! > "$(dirname "$0")/left.pid"
            """#
        )
        defer { try? FileManager.default.removeItem(atPath: directory) }
        defer {
            // The process it left is ours to end (by its id), not the test run's to wait for.
            if let text = try? String(contentsOfFile: directory + "/left.pid", encoding: .utf8),
                let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                kill(pid, SIGKILL)
            }
        }
        let token = World.appAccountToken(seed: 9, account: 0)
        let accounts = try AccountProvisioning.run(
            ["/bin/sh", path],
            tokens: [token],
            timeout: 3,
            interruption: Interruption()
        )
        #expect(accounts.fields(of: token) == ["id": "user-1"])
    }

    static func provisioningError(_ script: String, timeout: Double = 20) throws -> String? {
        let (path, directory) = try Self.script(script)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            _ = try AccountProvisioning.run(
                ["/bin/sh", path],
                tokens: [World.appAccountToken(seed: 9, account: 0)],
                timeout: timeout,
                interruption: Interruption()
            )
            return nil
        } catch .unreachable(let message) {
            return message
        } catch {
            return "not exit 69: \(error)"
        }
    }

    @Test func provisioningFailuresStopTheRunWithExit69AndStderr() throws {
        let failed = try #require(try Self.provisioningError("cat >/dev/null; echo 'database is locked' >&2; exit 3"))
        #expect(failed.contains("exited 3") && failed.contains("database is locked"), "\(failed)")
        let nonString = try #require(
            try Self.provisioningError(#"cat >/dev/null; echo '{"appAccountToken": "x", "id": 7}'"#)
        )
        #expect(nonString.contains("line 1") && nonString.contains("\"id\" is 7, expected a string"), "\(nonString)")
        let slow = try #require(try Self.provisioningError("sleep 5", timeout: 0.3))
        #expect(slow.contains("did not finish within 0.3 s"), "\(slow)")
    }

    @Test func aProvisionedFieldWithALineBreakIsRefused() throws {
        let token = World.appAccountToken(seed: 9, account: 0)
        let script = #"cat >/dev/null; printf '{"appAccountToken": "TOKEN", "token": "abc\\r\\nX-Evil: b"}\n'"#
            .replacingOccurrences(of: "TOKEN", with: token)
        let message = try #require(try Self.provisioningError(script))
        #expect(message.contains(#"output line 1: "token" holds a control character (U+000D)"#), "\(message)")
    }
}

/// A small profile with a `TARGET` to fill in.
enum ProfileText {
    static let minimal = """
        {
          name: "t", seed: 4,
          target: TARGET,
          catalog: { products: [{ id: "n", type: "nonConsumable", priceMilli: 990 }] },
          population: { accounts: 3 },
          actionMix: { nonConsumable: 1 },
          schedule: [{ kind: "constant", rate: 5, seconds: 5 }],
        }
        """
}
