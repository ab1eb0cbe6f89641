import Checking
import Profile
import Simulation
import TargetContract
import Testing

/// A backend that keeps every subscription a fixed real-time buffer past its expiry declares it
/// (`target.probe.expiryGraceSeconds`): an entitlement within the buffer is no wrong subscription state.
struct ExpiryGraceTests {
    /// Gold bought at 1 s, expiring at 20 s, never renewed (refunded at 5 s when `refunded`), for a target
    /// that declares `grace` seconds.
    static func expired(grace: Double?, refunded: Bool = false) throws -> Script {
        let setting = grace.map { ", expiryGraceSeconds: \($0)" } ?? ""
        let target = """
            { embeddedLedger: false, webhookURL: "http://127.0.0.1:1/n",
              probe: { kind: "http", url: "http://127.0.0.1:1/a/{appAccountToken}"\(setting) } }
            """
        var script = try Script(try scriptProfile(target: target))
        script.play(.grant, "2001", "gold", .autoRenewable, at: 1, expires: 20)
        if refunded { script.play(.revoke, "2001", "gold", .autoRenewable, at: 5, expires: 20) }
        return script
    }

    static let entitled = AccountState(
        entitlements: [.init(productId: "gold", transactionId: "2001", expiresDate: start + 20_000)]
    )

    @Test func anEntitlementPastTheExpiryFailsWithoutABuffer() throws {
        #expect(failures(try Self.expired(grace: nil).check(Self.entitled, at: 30)) == [.subscriptionState])
    }

    @Test func anEntitlementWithinTheDeclaredBufferHolds() throws {
        let script = try Self.expired(grace: 3600)
        #expect(failures(script.check(Self.entitled, at: 30)).isEmpty)
        #expect(script.checker.verdict(unchecked: []).tallies[.subscriptionState]?.passed == 1)
    }

    /// A 15 s buffer ends at 35 s: near its end undecided, past it a failure.
    @Test(arguments: [(30.0, "pass"), (35.5, "unknown"), (40.0, "fail")])
    func theBufferEndsWhereItSays(at t: Double, expected: String) throws {
        let results = try Self.expired(grace: 15).check(Self.entitled, at: t)
        let outcome = try #require(results.first { $0.invariant == .subscriptionState }?.outcome)
        switch outcome {
        case .pass: #expect(expected == "pass")
        case .unknown(let reason):
            #expect(expected == "unknown")
            #expect(reason.contains("declared buffer"), "\(reason)")
        case .fail: #expect(expected == "fail")
        }
    }

    /// A refund ends access at once: no buffer.
    @Test func aRefundedSubscriptionGetsNoBuffer() throws {
        let results = try Self.expired(grace: 3600, refunded: true).check(Self.entitled, at: 30)
        #expect(!failures(results).isEmpty)
    }

    @Test func theProfileBoundsTheBuffer() throws {
        let target = """
            { embeddedLedger: false, webhookURL: "http://127.0.0.1:1/n",
              probe: { kind: "http", url: "http://127.0.0.1:1/a/{appAccountToken}", expiryGraceSeconds: -1 } }
            """
        #expect(throws: (any Error).self) { try scriptProfile(target: target) }
    }
}
