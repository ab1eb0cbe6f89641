import Foundation
import Testing

@testable import Profile

/// `target.appStoreAPI` (the App Store Server API a run serves) and device flows that pull (issue 13, items 1 and 4).
struct AppStoreAPIConfigTests {
    static func target(_ extra: String, device: String = #"{ jws: "{signedTransaction}" }"#) -> String {
        """
        { webhookURL: "http://127.0.0.1:1/n",
          deviceDelivery: { url: "http://127.0.0.1:1/d", body: \(device) },
          \(extra) }
        """
    }

    @Test func appStoreAPISectionParsesListenKeysAndFaults() throws {
        let target = try RequestTemplateTests.profile(
            target: Self.target(
                """
                appStoreAPI: { listen: "127.0.0.1:8443", hostNames: ["api.example.test"], keyId: "K1",
                  issuerId: "I1", publicKey: "key.pem", sharedSecret: "s3cret",
                  faults: { rateLimit: 0.1, retryAfterSeconds: 2, serverErrors: 0.05, internalErrors: 0.01,
                            slow: 0.02, slowSeconds: 3, notFoundSeconds: 1.5 } },
                """
            )
        ).target
        let api = try #require(target.appStoreAPI)
        #expect(api.host == "127.0.0.1" && api.port == 8443)
        #expect(api.hostNames == ["api.example.test"])
        #expect(api.keyId == "K1" && api.issuerId == "I1" && api.publicKey == "key.pem")
        #expect(api.sharedSecret == "s3cret")
        #expect(api.faults.rateLimit == 0.1 && api.faults.retryAfterSeconds == 2)
        #expect(api.faults.serverErrors == 0.05 && api.faults.internalErrors == 0.01)
        #expect(api.faults.slow == 0.02 && api.faults.slowSeconds == 3 && api.faults.notFoundSeconds == 1.5)
    }

    @Test func emptyAppStoreAPISectionServesOnAnyLoopbackPortWithoutFaults() throws {
        let api = try #require(
            try RequestTemplateTests.profile(target: Self.target("appStoreAPI: {},")).target.appStoreAPI
        )
        #expect(api.host == "127.0.0.1" && api.port == 0)
        #expect(api.faults == AppStoreAPIFaults())
        #expect(try RequestTemplateTests.profile(target: Self.target("")).target.appStoreAPI == nil)
    }

    static let bad: [(section: String, path: String, expectation: String)] = [
        (#"{ listen: "0.0.0.0:8443" }"#, "target.appStoreAPI.listen", "a loopback address and port"),
        (#"{ listen: "127.0.0.1" }"#, "target.appStoreAPI.listen", "found \"127.0.0.1\""),
        (#"{ port: 1 }"#, "target.appStoreAPI.port", "no key 'port'"),
        (#"{ publicKey: "k.pem" }"#, "target.appStoreAPI.keyId", "a publicKey needs its keyId"),
        (#"{ hostNames: ["a b"] }"#, "target.appStoreAPI.hostNames[0]", "a host name"),
        (#"{ faults: { rateLimit: 2 } }"#, "target.appStoreAPI.faults.rateLimit", "from 0 to 1, found 2"),
        (#"{ faults: { notFound: 1 } }"#, "target.appStoreAPI.faults.notFound", "no key 'notFound'"),
    ]

    @Test(arguments: bad)
    func badAppStoreAPISectionNamesItsField(_ bad: (section: String, path: String, expectation: String)) throws {
        let error = try #require(RequestTemplateTests.error(target: Self.target("appStoreAPI: \(bad.section),")))
        #expect(error.path == bad.path, "\(error)")
        #expect(error.expected.contains(bad.expectation), "\(error)")
    }

    @Test(arguments: [
        (#"{ transactionId: "{transactionId}", userId: "{appAccountToken.lower}" }"#, true),
        (#"{ original: "{originalTransactionId}" }"#, true),
        (#"{ jws: "{signedTransaction}", id: "{transactionId}" }"#, false),
        (#"{ userId: "{appAccountToken}" }"#, false),
    ])
    func deviceDeliveryPullsWhenItsBodyNamesTheTransactionWithoutAJWS(body: String, pulls: Bool) throws {
        let target = try RequestTemplateTests.profile(target: Self.target("", device: body)).target
        #expect(target.deviceDelivery?.pulls == pulls)
        #expect(target.webhook?.pulls == false)
    }
}
