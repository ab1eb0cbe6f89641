import Foundation
import Primitives
import Testing

@testable import Profile

/// Request templates per role (`target.webhook`, `deviceDelivery`, `deviceReport`), their rendering, response
/// classification and `target.accounts` (issue 9, items 1–3).
struct RequestTemplateTests {
    static func profile(target: String) throws -> Profile {
        let text = ProfileTests.text(replacing: ("target: { embeddedLedger: true }", "target: \(target)"))
        return try Profile.decode(Data(text.utf8), file: "t.json5")
    }

    static func error(target: String) -> ProfileError? {
        do {
            _ = try profile(target: target)
            return nil
        } catch {
            return error as? ProfileError
        }
    }

    /// `target.headers` go as written on every request (webhook, device, probe): a placeholder there was sent
    /// literally, so it is refused, pointing to the role headers that render it.
    @Test func aPlaceholderInTargetHeadersIsRefusedPointingToTheRoleHeaders() throws {
        let target = """
            { webhookURL: "http://127.0.0.1:8000/apple", deviceURL: "http://127.0.0.1:8000/d",
              headers: { "X-Static": "a {b} c", Authorization: "Bearer {account.token}" } }
            """
        let error = try #require(Self.error(target: target))
        #expect(error.path == "target.headers.Authorization", "\(error)")
        #expect(error.expected.contains("{account.token}"), "\(error)")
        #expect(error.expected.contains("target.deviceDelivery.headers"), "\(error)")
        let withoutAuthorization = ", Authorization: \"Bearer {account.token}\""
        let literal = try Self.profile(target: target.replacingOccurrences(of: withoutAuthorization, with: ""))
        #expect(literal.target.headers["X-Static"] == "a {b} c")
    }

    static let backend = """
        { webhookURL: "http://127.0.0.1:8000/apple",
          deviceDelivery: {
            method: "PUT",
            url: "http://127.0.0.1:8000/v2/users/{account.id}/iap",
            headers: { Authorization: "Bearer {account.token}" },
            body: { jws: "{signedTransaction}", note: "user {appAccountToken.lower}!", n: 3, ok: true, x: null,
                    list: ["{productId}", "{transactionId}"] },
            responses: { granted: ["200-207"], alreadyHad: [409, "208"], retryLater: ["500-599"],
                         body: [{ status: 200, pointer: "/ok", equals: false, means: "rejected" }] },
          },
          deviceReport: {
            url: "http://127.0.0.1:8000/report",
            body: { userId: "{account.id}", sku: "{productId}", result: "{purchaseResult}" },
            purchaseResult: { pending: "pending", userCancelled: "cancelled" },
          },
          accounts: { provision: ["python3", "provision.py"], timeoutSeconds: 5, refreshSeconds: 1800 },
        }
        """

    // MARK: Parsing

    @Test func shorthandsAreContractV1Templates() throws {
        let target = try Self.profile(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", deviceURL: \"http://127.0.0.1:1/t\" }"
        ).target
        #expect(target.webhook?.url.text == "http://127.0.0.1:1/n")
        #expect(target.webhook?.body == nil)
        #expect(target.webhook?.responses.granted == [200...206])
        #expect(target.deviceDelivery?.responses.granted == [200...299])
        #expect(target.deviceReport?.url.text == "http://127.0.0.1:1/t")
        #expect(target.deviceURL == "http://127.0.0.1:1/t")
    }

    @Test func roleSectionsParseMethodHeadersBodyAndResponses() throws {
        let target = try Self.profile(target: Self.backend).target
        let device = try #require(target.deviceDelivery)
        #expect(device.method == "PUT")
        #expect(target.deviceURL == "http://127.0.0.1:8000/v2/users/{account.id}/iap")
        #expect(device.headers.map(\.name) == ["Authorization"])
        #expect(device.accountFields == ["token": "target.deviceDelivery.headers.Authorization"])
        #expect(device.responses.alreadyHad == [409...409, 208...208])
        #expect(device.responses.retryLater == [500...599])
        #expect(device.origin == "http://127.0.0.1:8000/")
        #expect(target.deviceReport?.purchaseResult["userCancelled"] == "cancelled")
        #expect(target.accounts?.provision == ["python3", "provision.py"])
        #expect(target.accounts?.timeoutSeconds == 5)
        #expect(target.accounts?.refreshSeconds == 1800)
    }

    struct Bad: Sendable, CustomStringConvertible {
        var target: String
        var path: String
        var expectation: String
        var description: String { path }
    }

    static let bad: [Bad] = [
        Bad(
            target: "{ webhook: { url: \"http://127.0.0.1:1/n\", body: { p: \"{signedPayloud}\" } } }",
            path: "target.webhook.body.p",
            expectation: "found unknown placeholder {signedPayloud}"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", deviceDelivery: { url: \"http://127.0.0.1:1/d\", "
                + "body: { jws: \"{signedPayload}\" } } }",
            path: "target.deviceDelivery.body.jws",
            expectation: "exists only in webhook"
        ),
        Bad(
            target: "{ webhook: { url: \"http://127.0.0.1:1/n\", body: { r: [\"{purchaseResult}\"] } } }",
            path: "target.webhook.body.r[0]",
            expectation: "exists only in deviceReport"
        ),
        Bad(
            target: "{ webhook: { url: \"http://127.0.0.1:1/n\", headers: { A: \"{account.token}\" } } }",
            path: "target.webhook.headers.A",
            expectation: "needs target.accounts.provision"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", headers: { \"X-Inj\": \"a\\r\\nX-Evil: b\" } }",
            path: "target.headers.X-Inj",
            expectation: "a header value without control characters, found \"a\\r\\nX-Evil: b\" (a CR, U+000D)"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", headers: { \"X-Evil: b\": \"a\" } }",
            path: "target.headers",
            expectation: "a header name of letters, digits"
        ),
        Bad(
            target: "{ webhook: { url: \"http://127.0.0.1:1/n\", headers: { A: \"x\\ny\" } } }",
            path: "target.webhook.headers.A",
            expectation: "(an LF, U+000A)"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", probe: { kind: \"http\", "
                + "url: \"http://127.0.0.1:1/u/{appAccountToken}\", headers: { A: \"tab\\there\" } } }",
            path: "target.probe.headers.A",
            expectation: "a control character, U+0009"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:99999/n\" }",
            path: "target.webhookURL",
            expectation: "a port from 1 to 65535, found \"99999\" in \"http://127.0.0.1:99999/n\""
        ),
        Bad(
            target: "{ webhook: { url: \"http://127.0.0.1:/n\" } }",
            path: "target.webhook.url",
            expectation: "a port after ':' (an empty variable?), found \"http://127.0.0.1:/n\""
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/a b\" }",
            path: "target.webhookURL",
            expectation:
                "a URL of URL characters only (percent-encode others), found \"http://127.0.0.1:1/a b\" (a space)"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", deviceURL: \"http://127.0.0.1:1/d\\\"x\" }",
            path: "target.deviceURL",
            expectation: "('\"', U+0022)"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/{x}\" }",
            path: "target.webhookURL",
            expectation: "a known placeholder ({signedPayload}"
        ),
        Bad(
            target: "{ webhook: { url: \"http://127.0.0.1:1/n?p={signedPayload}\" } }",
            path: "target.webhook.url",
            expectation: "only in the body"
        ),
        Bad(
            target: "{ webhook: { url: \"http://127.0.0.1:1/n\", bogus: 1 } }",
            path: "target.webhook.bogus",
            expectation: "no key 'bogus'"
        ),
        Bad(
            target: "{ webhook: { url: \"http://127.0.0.1:1/n\", headers: [\"x\"] } }",
            path: "target.webhook.headers",
            expectation: "an object of string values"
        ),
        Bad(
            target: "{ webhook: { url: \"http://{account.id}/n\" } }",
            path: "target.webhook.url",
            expectation: "scheme and host hold no placeholder"
        ),
        Bad(
            target: "{ webhook: { url: \"http://staging.example.com/n\" } }",
            path: "target.webhook.url",
            expectation: "loopback host"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", webhook: { url: \"http://127.0.0.1:1/m\" } }",
            path: "target.webhook.url",
            expectation: "give only one"
        ),
        Bad(
            target: "{ webhook: { url: \"http://127.0.0.1:1/n\", responses: { granted: [\"200-700\"] } } }",
            path: "target.webhook.responses.granted[0]",
            expectation: "HTTP statuses"
        ),
        Bad(
            target: "{ webhook: { url: \"http://127.0.0.1:1/n\", responses: { alreadyHad: [204] } } }",
            path: "target.webhook.responses.alreadyHad",
            expectation: "not also in granted"
        ),
        Bad(
            target: "{ webhook: { url: \"http://127.0.0.1:1/n\", responses: { body: [{ pointer: \"/ok\", "
                + "equals: 1, means: \"maybe\" }] } } }",
            path: "target.webhook.responses.body[0].means",
            expectation: "one of granted, alreadyHad, rejected, retryLater"
        ),
        Bad(
            target: "{ webhook: { url: \"http://127.0.0.1:1/n\", purchaseResult: { pending: \"p\" } } }",
            path: "target.webhook.purchaseResult",
            expectation: "outside deviceReport"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", accounts: { provision: [] } }",
            path: "target.accounts.provision",
            expectation: "a non-empty argument array"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", accounts: { provision: [\"x\"], timeout: 3 } }",
            path: "target.accounts.timeout",
            expectation: "no key 'timeout'"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", accounts: { refreshSeconds: 600 } }",
            path: "target.accounts.refreshSeconds",
            expectation: "no refreshSeconds without target.accounts.provision"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", accounts: { provision: [\"x\"], refreshSeconds: 0.5 } }",
            path: "target.accounts.refreshSeconds",
            expectation: "a number from 1 to 86400, found 0.5"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", probe: { kind: \"http\", "
                + "url: \"http://127.0.0.1:1/u/{appAccountToken}\", headers: { A: \"Bearer {account.token}\" } } }",
            path: "target.probe.headers.A",
            expectation: "{account.token} needs target.accounts.provision"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", probe: { kind: \"http\", "
                + "url: \"http://127.0.0.1:1/u/{appAccountToken}\", headers: { P: \"{productId}\" } } }",
            path: "target.probe.headers.P",
            expectation: "the account's placeholders only"
        ),
        Bad(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", probe: { kind: \"bulk\", command: [\"x\"], "
                + "headers: { A: \"b\" } } }",
            path: "target.probe.headers",
            expectation: "they apply to kinds http and pointer"
        ),
        Bad(
            target:
                "{ webhookURL: \"http://127.0.0.1:1/n\", probe: { kind: \"http\", url: \"http://127.0.0.1:1/u/{account.token}\" } }",
            path: "target.probe.url",
            expectation: "a URL naming the account"
        ),
        Bad(
            target: "{ embeddedLedger: true, deviceDelivery: { url: \"http://127.0.0.1:1/d\" } }",
            path: "target.deviceDelivery",
            expectation: "no deviceDelivery section when embeddedLedger is true"
        ),
    ]

    @Test(arguments: bad)
    func badTemplatesNameTheirPath(_ bad: Bad) throws {
        let error = try #require(Self.error(target: bad.target), "accepted \(bad.target)")
        #expect(error.path == bad.path, "\(error)")
        #expect(error.expected.contains(bad.expectation), "\(error)")
    }

    @Test func bodyThatIsNotValidJSON5NamesItsLine() throws {
        let error = try #require(
            Self.error(target: "{ webhook: { url: \"http://127.0.0.1:1/n\", body: { a: \"{signedPayload}\" b: 1 } } }")
        )
        #expect(error.path.hasPrefix("target.webhook.body"), "\(error)")
        #expect(error.line != nil, "\(error)")
    }

    // MARK: Rendering

    static let values = TemplateValues(
        signed: "h.p.s",
        appAccountToken: "0A1B2C3D-0000-4000-8000-00000000000F",
        productId: "coins",
        transactionId: "2000000001",
        originalTransactionId: "2000000000",
        purchaseResult: "userCancelled",
        account: ["id": "u/1 2", "token": "t\"o\\k\u{e9}n\u{1F600}\n"]
    )

    @Test func bodyRendersEscapedValuesAndKeepsLiterals() throws {
        let device = try #require(try Self.profile(target: Self.backend).target.deviceDelivery)
        let bytes = try #require(device.body).render(Self.values)
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == #"{"jws":"h.p.s","list":["coins","2000000001"],"n":3,"note":"user 0a1b2c3d-0000-4000-8000-00000000000f!","ok":true,"x":null}"#
        )
    }

    @Test func valuesWithQuotesBackslashesAndUnicodeRoundTripThroughJSON() throws {
        let body = try BodyTemplate(
            .object(["whole": .string("{account.token}"), "inside": .string("<{account.token}>")]),
            path: "body"
        )
        let decoded = try #require(
            try JSONSerialization.jsonObject(with: Data(body.render(Self.values))) as? [String: String]
        )
        #expect(decoded["whole"] == "t\"o\\k\u{e9}n\u{1F600}\n")
        #expect(decoded["inside"] == "<t\"o\\k\u{e9}n\u{1F600}\n>")
    }

    @Test func exactlyOnePlaceholderIsAJSONStringAndLiteralBracesStay() throws {
        let body = try BodyTemplate(.array([.string("{productId}"), .string("{\"a\": 1}"), .string("{}")]), path: "b")
        #expect(String(decoding: body.render(Self.values), as: UTF8.self) == #"["coins","{\"a\": 1}","{}"]"#)
    }

    @Test func bodyNumbersKeepEveryDigitOfTheProfile() throws {
        // 2^53 + 1 and a price in micros past 2^63 have no exact double; the template writes the profile's digits.
        let target = Self.backend.replacingOccurrences(
            of: "n: 3,",
            with: "n: 9007199254740993, micros: 18446744073709551615, price: 0.99, big: 1e300,"
        )
        let device = try #require(try Self.profile(target: target).target.deviceDelivery)
        let text = String(decoding: try #require(device.body).render(Self.values), as: UTF8.self)
        #expect(text.contains(#""n":9007199254740993,"#), "\(text)")
        #expect(text.contains(#""micros":18446744073709551615,"#), "\(text)")
        #expect(text.contains(#""price":0.99,"#) && text.contains(#""big":1e+300,"#), "\(text)")
    }

    @Test func urlValuesArePercentEncodedAndHeadersLoseControlCharacters() throws {
        let url = try TemplateString("http://127.0.0.1:1/u/{account.id}/t/{account.token}?p={productId}")
        #expect(
            url.render(Self.values, encoding: .url)
                == "http://127.0.0.1:1/u/u%2F1%202/t/t%22o%5Ck%C3%A9n%F0%9F%98%80%0A?p=coins"
        )
        let header = try TemplateString("Bearer {account.token}")
        #expect(header.render(Self.values, encoding: .header) == "Bearer t\"o\\k\u{e9}n\u{1F600}")
    }

    @Test func purchaseResultGoesThroughTheValueMapAndAccountIdDefaultsToTheToken() throws {
        let report = try #require(try Self.profile(target: Self.backend).target.deviceReport)
        var values = Self.values
        values.account = [:]
        let text = String(
            decoding: try #require(report.body).render(values, resultMap: report.purchaseResult),
            as: UTF8.self
        )
        #expect(text == #"{"result":"cancelled","sku":"coins","userId":"0A1B2C3D-0000-4000-8000-00000000000F"}"#)
        values.purchaseResult = "success"
        let claim = String(
            decoding: try #require(report.body).render(values, resultMap: report.purchaseResult),
            as: UTF8.self
        )
        #expect(claim.contains(#""result":"success""#))
    }

    // MARK: Classification

    @Test func defaultClassificationFollowsEachRole() {
        let webhook = ResponseClassification(role: .webhook)
        #expect(webhook.meaning(status: 200, body: []) == .granted)
        #expect(webhook.meaning(status: 206, body: []) == .granted)
        #expect(webhook.meaning(status: 207, body: []) == .rejected)
        #expect(webhook.meaning(status: 409, body: []) == .rejected)
        let device = ResponseClassification(role: .deviceDelivery)
        #expect(device.meaning(status: 299, body: []) == .granted)
        #expect(device.meaning(status: 500, body: []) == .rejected)
        // A device endpoint that limits its rate says "not now", which is no refusal; the App Store keeps its
        // own schedule, so for the webhook a 429 is a failed attempt like any other.
        #expect(device.meaning(status: 429, body: []) == .retryLater)
        #expect(webhook.meaning(status: 429, body: []) == .rejected)
    }

    @Test func defaultRetryLaterGivesWayToAStatusTheRoleGrants() throws {
        func device(_ responses: String) throws -> ResponseClassification {
            let target =
                "{ webhookURL: \"http://127.0.0.1:1/n\", deviceDelivery: { url: \"http://127.0.0.1:1/t\", responses: \(responses) } }"
            return try #require(try Self.profile(target: target).target.deviceDelivery).responses
        }
        #expect(try device("{ alreadyHad: [409] }").meaning(status: 429, body: []) == .retryLater)
        #expect(try device(#"{ granted: ["200-499"] }"#).meaning(status: 429, body: []) == .granted)
        #expect(try device("{ retryLater: [503] }").meaning(status: 429, body: []) == .rejected)
    }

    @Test func classificationUsesStatusSetsRangesAndBodyOverrides() throws {
        let responses = try #require(try Self.profile(target: Self.backend).target.deviceDelivery).responses
        let table: [(Int, String, ResponseMeaning)] = [
            (201, "", .granted),
            (200, #"{"ok": true}"#, .granted),
            (200, #"{"ok": false, "granted": false}"#, .rejected),
            (201, #"{"ok": false}"#, .granted),  // the override is for 200 only
            (200, "not json", .granted),
            (208, "", .alreadyHad),
            (409, #"{"ok": false}"#, .alreadyHad),
            (503, "", .retryLater),
            (400, "", .rejected),
        ]
        for (status, body, meaning) in table {
            #expect(responses.meaning(status: status, body: Array(body.utf8)) == meaning, "\(status) \(body)")
        }
        #expect(ResponseMeaning.alreadyHad.isAcknowledged && !ResponseMeaning.retryLater.isAcknowledged)
    }

    // MARK: Accounts

    @Test func accountDirectoryMatchesTokensCaseInsensitively() throws {
        let directory = AccountDirectory(["0a1b2c3d-0000-4000-8000-00000000000f": ["id": "42", "token": "abc"]])
        #expect(directory.fields(of: "0A1B2C3D-0000-4000-8000-00000000000F") == ["id": "42", "token": "abc"])
        #expect(
            directory.fields(of: "11111111-0000-4000-8000-000000000000") == [
                "id": "11111111-0000-4000-8000-000000000000"
            ]
        )
        let url = try TemplateString("http://127.0.0.1:1/users/{account.id}/wallet?t={appAccountToken.lower}")
        #expect(
            directory.render(url, for: "0A1B2C3D-0000-4000-8000-00000000000F", encoding: .url)
                == "http://127.0.0.1:1/users/42/wallet?t=0a1b2c3d-0000-4000-8000-00000000000f"
        )
        #expect(
            AccountDirectory.sameAccount("0a1b2c3d-0000-4000-8000-00000000000f", "0A1B2C3D-0000-4000-8000-00000000000F")
        )
    }

    @Test func aRefreshReachesEveryCopyAndKeepsTheAccountsItLeavesOut() {
        let (a, b) = ("0a1b2c3d-0000-4000-8000-00000000000f", "0a1b2c3d-0000-4000-8000-00000000000e")
        let directory = AccountDirectory([a: ["id": "1", "token": "old"], b: ["id": "2", "token": "old"]])
        let copy = directory
        directory.refresh(with: AccountDirectory([a.uppercased(): ["id": "1", "token": "new"]]))
        #expect(copy.fields(of: a) == ["id": "1", "token": "new"])
        #expect(copy.fields(of: b) == ["id": "2", "token": "old"])
        #expect(copy == directory && copy.count == 2)
    }

    @Test func anHTTPProbeMayCarryTheAccountsOwnHeadersAndNameItByItsBackendId() throws {
        let target = try Self.profile(
            target:
                "{ webhookURL: \"http://127.0.0.1:1/n\", accounts: { provision: [\"p\"] }, probe: { kind: \"http\", "
                + "url: \"http://127.0.0.1:1/u/{account.id}/wallet\", headers: { Authorization: \"Bearer {account.token}\" } } }"
        ).target
        let probe = try #require(target.probe)
        #expect(probe.headers.map(\.name) == ["Authorization"])
        #expect(probe.headers.first?.value.text == "Bearer {account.token}")
        #expect(probe.accountFields == ["token": "target.probe.headers.Authorization"])
    }

    @Test func probeURLMayUseAccountPlaceholders() throws {
        let target = try Self.profile(
            target: "{ webhookURL: \"http://127.0.0.1:1/n\", probe: { kind: \"http\", "
                + "url: \"http://127.0.0.1:1/u/{account.id}?t={appAccountToken}\" } }"
        ).target
        #expect(target.probe?.url == "http://127.0.0.1:1/u/{account.id}?t={appAccountToken}")
    }
}

/// `target.requestHook`: a bare argument array, or an object with its roles, timeout and cap.
struct RequestHookConfigTests {
    private func decode(_ json5: String) throws -> RequestHookConfig {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        return try decoder.decode(RequestHookConfig.self, from: Data(json5.utf8))
    }

    @Test func aBareArrayIsTheCommandForEveryRoleWithTheDefaults() throws {
        let hook = try decode(#"["python3", "sign.py"]"#)
        #expect(hook.command == ["python3", "sign.py"] && hook.roles == RequestRole.allCases)
        #expect(hook.timeoutSeconds == 5 && hook.maxInFlight == 256 && hook.label == "python3 sign.py")
    }

    @Test func anObjectNamesItsRolesTimeoutAndCap() throws {
        let hook = try decode(
            #"{command: ["./sign"], roles: ["deviceDelivery"], timeoutSeconds: 0.5, maxInFlight: 8}"#
        )
        #expect(hook.roles == [.deviceDelivery] && hook.timeoutSeconds == 0.5 && hook.maxInFlight == 8)
    }

    @Test(arguments: [
        (#"[]"#, "a non-empty argument array"),
        (#"{command: ["x"], roles: ["probe"]}"#, "found \"probe\""),
        (#"{command: ["x"], roles: []}"#, "at least one role"),
        (#"{command: ["x"], timeoutSeconds: 0}"#, "a number from"),
        (#"{command: ["x"], signer: true}"#, "no key 'signer'"),
        (#"{roles: ["webhook"]}"#, "command"),
    ])
    func aBadHookIsRefusedNamingTheField(json5: String, expected: String) {
        do {
            _ = try decode(json5)
            Issue.record("accepted \(json5)")
        } catch let issue as ProfileIssue {
            #expect("\(issue.path): \(issue.expected)".contains(expected), "\(issue)")
        } catch {
            Issue.record("not a ProfileIssue: \(error)")
        }
    }
}
