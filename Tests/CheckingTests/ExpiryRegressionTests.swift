import Chaos
import Checking
import Profile
import Simulation
import TargetContract
import Testing

/// A subscription's expiry moving back is stale only when no data since the longest expiry shown was as short.
struct ExpiryRegressionTests {
    /// A subscription extended, then upgraded (a new period from now, shorter than the extended one), then the upgrade
    /// extended, with that extension still queued when the probe asks: the upgrade's expiry the target shows is no
    /// regression, since the newer data it has shortened it.
    @Test func shorterExpiryThatNewerDataGaveIsNoRegression() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "gold", .autoRenewable, at: 1, expires: 200)
        let extended = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 200_000)])
        #expect(failures(script.check(extended, at: 5, final: false)).isEmpty)
        // The upgrade, then its extension, still queued.
        script.play(.grant, "1002", "gold", .autoRenewable, at: 10, expires: 150, original: "1001")
        script.play(.grant, "1002", "gold", .autoRenewable, at: 20, outcome: nil, expires: 250, original: "1001")
        let upgraded = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 150_000)])
        #expect(failures(script.check(upgraded, at: 21, final: false)).isEmpty)
        // What the target showed is the baseline now: going further back is stale.
        let older = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 120_000)])
        let found = try #require(witness(script.check(older, at: 30, final: false), .noStaleRegression))
        #expect(found.summary.contains("back from \(start + 150_000) to \(start + 120_000)"))
    }

    /// Without shorter data since, the same move back stays a regression.
    @Test func shorterExpiryNoDataGaveIsARegression() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "gold", .autoRenewable, at: 1, expires: 100)
        script.play(.grant, "1002", "gold", .autoRenewable, at: 2, expires: 200, original: "1001")
        let renewed = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 200_000)])
        #expect(failures(script.check(renewed, at: 5, final: false)).isEmpty)
        script.play(.grant, "1003", "gold", .autoRenewable, at: 10, outcome: nil, expires: 300, original: "1001")
        let stale = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 100_000)])
        #expect(failures(script.check(stale, at: 11, final: false)) == [.noStaleRegression])
    }

    /// Two subscriptions of one group, the first extended (a probe showed its expiry), the second upgraded (its new
    /// period still queued), then the first refunded: the second's acknowledged period, shorter than the first's, is no
    /// regression. An expiry at least as long as every one the target acknowledged of the group's standing transactions
    /// is no regression.
    @Test func expiryOfAnotherSeriesAfterARefundIsNoRegression() throws {
        for upgradeReached in [false, true] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "1001", "gold", .autoRenewable, at: 1, expires: 100)
            let first = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 100_000)])
            #expect(failures(script.check(first, at: 2, final: false)).isEmpty)
            script.play(.grant, "2001", "gold", .autoRenewable, at: 3, expires: 80)
            script.play(
                .grant,
                "2002",
                "gold",
                .autoRenewable,
                at: 4,
                outcome: upgradeReached ? .acknowledged(status: 200) : nil,
                expires: 120,
                original: "2001"
            )
            script.play(.revoke, "1001", "gold", .autoRenewable, at: 5, expires: 100)
            let second = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 80_000)])
            let failed = failures(script.check(second, at: 6, final: false))
            #expect(failed == (upgradeReached ? [.noStaleRegression] : []), "upgrade reached: \(upgradeReached)")
        }
    }

    /// A family subscription extended (a probe showed it), then revoked; another series of the group upgraded, the
    /// upgrade missed at the harness's in-flight cap. The other series' period still stands, since the target never got
    /// the upgrade, so showing it is no regression: a period stands until the target acknowledged a later transaction
    /// of its series.
    @Test func periodSupersededByAnUpgradeTheTargetNeverGotStillStands() throws {
        for upgradeReached in [false, true] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "1001", "gold", .autoRenewable, at: 1, expires: 100)
            let first = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 100_000)])
            #expect(failures(script.check(first, at: 2, final: false)).isEmpty)
            script.play(.grant, "2001", "gold", .autoRenewable, at: 3, expires: 80)
            script.play(.revoke, "1001", "gold", .autoRenewable, at: 4, expires: 100)
            script.play(
                .grant,
                "2002",
                "gold",
                .autoRenewable,
                at: 5,
                outcome: upgradeReached
                    ? .acknowledged(status: 200)
                    : .notSent(reason: "in-flight cap 4096 reached", harnessLimited: true),
                expires: 120,
                original: "2001",
                supersedes: "2001"
            )
            let second = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 80_000)])
            let failed = failures(script.check(second, at: 6, final: false))
            #expect(failed == (upgradeReached ? [.noStaleRegression] : []), "upgrade reached: \(upgradeReached)")
        }
    }

    /// A family subscription revoked, a new series bought, then upgraded; the probe asked before the target
    /// acknowledged the upgrade, and its answer is judged after. The new series' period still stands for that probe:
    /// only what the target acknowledged by the time the probe asked counts.
    @Test func upgradeAcknowledgedAfterTheProbeAskedLeavesThePeriodStanding() throws {
        for askedAfterTheUpgrade in [false, true] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "1001", "gold", .autoRenewable, at: 1, expires: 100)
            let first = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 100_000)])
            #expect(failures(script.check(first, at: 2, final: false)).isEmpty)
            script.play(.revoke, "1001", "gold", .autoRenewable, at: 3, expires: 100)
            script.play(.grant, "2001", "gold", .autoRenewable, at: 4, expires: 80)
            script.play(
                .grant,
                "2002",
                "gold",
                .autoRenewable,
                at: 5,
                expires: 120,
                original: "2001",
                supersedes: "2001"
            )
            let second = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 80_000)])
            let results = script.checker.check(
                account: script.token,
                state: second,
                at: 6,
                final: false,
                asked: askedAfterTheUpgrade ? 5.5 : 4.5
            )
            #expect(failures(results) == (askedAfterTheUpgrade ? [.noStaleRegression] : []))
        }
    }

    /// A subscription extended (a probe showed it), then upgraded to a period that ends sooner; the probe asked before
    /// the target acknowledged the upgrade, and the target read its state after applying it. A later transaction
    /// acknowledged before the answer may explain a shorter expiry; one never sent does not.
    @Test func upgradeAcknowledgedWhileTheProbeWasInFlightExplainsAShorterExpiry() throws {
        for upgradeAcknowledged in [true, false] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "1001", "gold", .autoRenewable, at: 1, expires: 200)
            // The upgrade, and a second one after it, both on their way when a probe shows the extended period.
            let upgrade = script.play(
                .grant,
                "1002",
                "gold",
                .autoRenewable,
                at: 3,
                outcome: nil,
                expires: 150,
                original: "1001",
                supersedes: "1001"
            )
            script.play(
                .grant,
                "1003",
                "gold",
                .autoRenewable,
                at: 4,
                outcome: nil,
                expires: 210,
                original: "1001",
                supersedes: "1002"
            )
            let extended = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 200_000)])
            #expect(failures(script.check(extended, at: 5, final: false)).isEmpty)
            // The first upgrade is acknowledged while a probe that asked before is in flight, or not yet.
            if upgradeAcknowledged { script.checker.record(upgrade, outcome: .acknowledged(status: 200), at: 10) }
            let upgraded = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 150_000)])
            let results = script.checker.check(account: script.token, state: upgraded, at: 11, final: false, asked: 9.5)
            #expect(
                failures(results) == (upgradeAcknowledged ? [] : [.noStaleRegression]),
                "upgrade acknowledged: \(upgradeAcknowledged)"
            )
        }
    }

    /// One series refunded after the probe showed its expiry, another's revocation dispatched but not yet answered when
    /// the probe showed that series' period, and the first series' resubscription still queued: with nothing of the
    /// group standing acknowledged in the books, nothing the target shows is stale.
    @Test func nothingStandingAcknowledgedIsNoRegression() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "gold", .autoRenewable, at: 1, expires: 100)
        let first = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 100_000)])
        #expect(failures(script.check(first, at: 2, final: false)).isEmpty)
        script.play(.grant, "3001", "gold", .autoRenewable, at: 3, expires: 90)
        script.play(.revoke, "1001", "gold", .autoRenewable, at: 4, expires: 100)
        script.play(.revoke, "3001", "gold", .autoRenewable, at: 5, outcome: nil, expires: 90)
        script.play(
            .grant,
            "1002",
            "gold",
            .autoRenewable,
            at: 5.5,
            outcome: .notSent(reason: "in-flight cap 4096 reached", harnessLimited: true),
            expires: 130,
            original: "1001"
        )
        let second = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 90_000)])
        #expect(failures(script.check(second, at: 6, final: false)).isEmpty)
    }
}
