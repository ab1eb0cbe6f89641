import AppStoreModel
import AppStoreServerAPI
import Foundation
import HTTPServer
import Signing
import Simulation
import Testing

/// Bearer checks and the API's own faults.
struct APIGuardTests {
    private static let now = APIFixture.start / 1000
    private static var good: [String: Any] {
        ["iss": "issuer", "aud": "appstoreconnect-v1", "bid": APIFixture.bundleId, "iat": now, "exp": now + 600]
    }

    @Test(arguments: [
        ("aud", "\"appstoreconnect-v2\""), ("bid", "\"com.other.app\""), ("exp", String(now - 1)),
        ("exp", String(now + 3601)), ("iss", "\"\""), ("iat", "\"yesterday\""), ("exp", "true"),
    ])
    func refusesATokenWithAWrongClaimWith401(claim: String, value: String) throws {
        let fixture = try APIFixture()
        fixture.store.insert(APIFixture.facts(id: "1"), customer: 0, at: APIFixture.start)
        var claims = Self.good
        claims[claim] = APIFixture.value(value)
        let answer = fixture.request("GET", "/inApps/v1/transactions/1", token: APIFixture.token(claims: claims))
        #expect(answer.response.status == 401)
        #expect(answer.response.headers["Content-Type"] != "application/json")
    }

    @Test func refusesAMissingTokenAndAnotherAlgorithm() throws {
        let fixture = try APIFixture()
        #expect(fixture.request("GET", "/inApps/v1/transactions/1", token: nil).response.status == 401)
        let es384 = APIFixture.token(alg: "ES384")
        #expect(fixture.request("GET", "/inApps/v1/transactions/1", token: es384).response.status == 401)
    }

    @Test func acceptsAppleLibraryTokensWithoutIssuedAt() throws {
        let fixture = try APIFixture()
        #expect(fixture.request("GET", "/inApps/v1/transactions/1").response.status == 404)
        #expect(
            fixture.request("GET", "/inApps/v1/transactions/1", token: APIFixture.token(claims: Self.good)).response
                .status == 404
        )
    }

    @Test func checksTheSignatureWhenTheKeyIdHasAPublicKey() throws {
        let pem = try APIFixture.bearerKey.publicKeyPEM()
        let fixture = try APIFixture(publicKeys: ["KEY123": pem])
        #expect(fixture.request("GET", "/inApps/v1/transactions/1").response.status == 404)
        let otherKey = try SigningKey.generate(.p256)
        #expect(
            fixture.request("GET", "/inApps/v1/transactions/1", token: APIFixture.token(key: otherKey)).response.status
                == 401
        )
        #expect(
            fixture.request("GET", "/inApps/v1/transactions/1", token: APIFixture.token(kid: "OTHER")).response.status
                == 401
        )
    }

    @Test func checksTheIssuerWhenOneIsConfigured() {
        let issuer = "57246542-96fe-1a63-e053-0824d011072a"
        let check = BearerAuthentication(bundleId: APIFixture.bundleId, issuerId: issuer)
        let now = APIFixture.start / 1000
        #expect((try? check.check(authorization: "Bearer " + APIFixture.token(), nowSeconds: now)) == "KEY123")
        var claims: [String: Any] = ["aud": "appstoreconnect-v1", "bid": APIFixture.bundleId, "exp": now + 300]
        claims["iss"] = "another-issuer"
        let refused = #expect(throws: BearerAuthentication.Refusal.self) {
            try check.check(authorization: "Bearer " + APIFixture.token(claims: claims), nowSeconds: now)
        }
        #expect(refused?.reason == "iss is not \(issuer)")
    }

    @Test func refusesAPublicKeyThatIsNoKey() {
        #expect(throws: APIConfigurationError.self) { try APIFixture(publicKeys: ["K": "not a key"]) }
    }

    @Test func rateLimitsWithRetryAfterAndLogsIt() throws {
        let fixture = try APIFixture(faults: APIFaults(seed: 1, rateLimitProbability: 1, retryAfterSeconds: 7))
        fixture.store.insert(APIFixture.facts(id: "1"), customer: 0, at: APIFixture.start)
        let answer = fixture.request("GET", "/inApps/v1/transactions/1")
        #expect(answer.response.status == 429)
        #expect(answer.response.headers["Retry-After"] == "7")
        #expect(fixture.json(answer)["errorCode"] as? Int == 4_290_000)
        #expect(
            fixture.api.faultLog == [
                APIFaultEvent(at: APIFixture.start, endpoint: "getTransactionInfo", id: "1", kind: .rateLimit)
            ]
        )
    }

    @Test(arguments: [
        (APIFaults(retryableErrorProbability: 1), 5_000_001), (APIFaults(internalErrorProbability: 1), 5_000_000),
    ])
    func answersInternalErrorsWithApplesCodes(faults: APIFaults, code: Int) throws {
        let fixture = try APIFixture(faults: faults)
        let answer = fixture.request("GET", "/inApps/v1/transactions/1")
        #expect(answer.response.status == 500)
        #expect(fixture.json(answer)["errorCode"] as? Int == code)
    }

    @Test func drawsTheSameFaultsFromTheSameSeed() throws {
        func statuses(seed: UInt64) throws -> [Int] {
            let faults = APIFaults(seed: seed, rateLimitProbability: 0.3, retryableErrorProbability: 0.3)
            let fixture = try APIFixture(faults: faults)
            return (0..<40).map { _ in fixture.request("GET", "/inApps/v1/transactions/1").response.status }
        }
        let first = try statuses(seed: 9)
        #expect(first == (try statuses(seed: 9)))
        #expect(Set(first) == [404, 429, 500])
        #expect(first != (try statuses(seed: 10)))
    }

    @Test func holdsBackSlowAnswers() throws {
        let fixture = try APIFixture(faults: APIFaults(slowProbability: 1, slowSeconds: 3))
        let answer = fixture.request("GET", "/inApps/v1/transactions/1")
        #expect(answer.delaySeconds == 3)
        #expect(fixture.api.faultLog.map(\.kind) == [.slow])
    }

    @Test func knowsANewTransactionOnlyAfterTheConsistencyDelay() throws {
        let fixture = try APIFixture(faults: APIFaults(notFoundSeconds: 2))
        fixture.store.insert(APIFixture.facts(id: "5"), customer: 0, at: APIFixture.start)
        let early = fixture.request("GET", "/inApps/v1/transactions/5")
        #expect(fixture.json(early)["errorCode"] as? Int == 4_040_010)
        #expect(fixture.api.faultLog.map(\.kind) == [.notFoundYet])
        fixture.advance(seconds: 2)
        #expect(fixture.request("GET", "/inApps/v1/transactions/5").response.status == 200)
    }

    @Test func listsItsTransactionsOnTheAdminPathWithoutAToken() throws {
        let fixture = try APIFixture()
        fixture.store.insert(APIFixture.facts(id: "77"), customer: 4, at: APIFixture.start)
        let answer = fixture.request("GET", "/paystorm/transactions", token: nil)
        let list = (try? JSONSerialization.jsonObject(with: Data(answer.response.body))) as? [[String: Any]]
        #expect(list?.first?["transactionId"] as? String == "77")
        #expect(list?.first?["customer"] as? Int == 4)
    }
}
