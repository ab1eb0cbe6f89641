import Chaos
import Checking
import Profile
import Simulation
import TargetContract
import Testing

/// A subscription is owed until the expiry the target acknowledged, not one it was never sent.
struct UnacknowledgedExtensionTests {
    /// A `RENEWAL_EXTENDED` of subscription 2001 at 5 s, to an expiry at 40 s.
    private func extend(_ script: inout Script, outcome: DeliveryOutcome?) {
        script.play(
            .grant,
            "2001",
            "gold",
            .autoRenewable,
            at: 5,
            outcome: outcome,
            notification: "RENEWAL_EXTENDED",
            expires: 40
        )
    }

    /// The `REFUND_REVERSED` of transaction 2001 at 3 s, reached or missed at the harness's in-flight cap.
    private func reverse(_ script: inout Script, reached: Bool) {
        script.play(
            .reinstate,
            "2001",
            "gold",
            .autoRenewable,
            at: 3,
            outcome: reached ? .acknowledged(status: 200) : .notSent(reason: "missed", harnessLimited: true),
            notification: "REFUND_REVERSED",
            expires: 20
        )
    }

    /// The end of series 2001 (gold until 40 s): its refund at 4 s, reached or missed at the harness's in-flight
    /// cap, and its next resubscription at 5 s, ending at 25 s, missed.
    private func endSeries(_ script: inout Script, refundReached: Bool) {
        let missed = DeliveryOutcome.notSent(reason: "in-flight cap 4096 reached", harnessLimited: true)
        script.play(
            .revoke,
            "2001",
            "gold",
            .autoRenewable,
            at: 4,
            outcome: refundReached ? .acknowledged(status: 200) : missed,
            expires: 40
        )
        script.play(.grant, "2002", "gold", .autoRenewable, at: 5, outcome: missed, expires: 25, original: "2001")
    }

    /// A resubscription acknowledged, then two `RENEWAL_EXTENDED`, the second dropped by the harness over its in-flight
    /// cap: the subscription is owed only to the first extension's expiry, so a target that ends it there passes
    /// subscription-state.
    @Test func expiryOnlyAnUnsentExtensionGaveIsNotOwed() throws {
        for extensionReached in [false, true] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "2001", "gold", .autoRenewable, at: 1, expires: 20)
            extend(&script, outcome: extensionReached ? .acknowledged(status: 200) : .notSent(reason: "missed"))
            let results = script.check(AccountState(), at: 30)
            #expect(
                failures(results) == (extensionReached ? [.subscriptionState] : []),
                "extension reached: \(extensionReached)"
            )
        }
    }

    /// The first acknowledgment may come after the extension is booked: the target then has what it acknowledged.
    @Test func acknowledgmentOfTheOlderPeriodAfterTheExtensionIsBookedOwesTheOlderExpiry() throws {
        var script = try Script(try scriptProfile())
        let purchase = script.play(.grant, "2001", "gold", .autoRenewable, at: 1, outcome: nil, expires: 20)
        extend(&script, outcome: .notSent(reason: "missed"))
        script.checker.record(purchase, outcome: .acknowledged(status: 200), at: 6)
        #expect(failures(script.check(AccountState(), at: 30)).isEmpty)
        // Before its acknowledged expiry, the subscription is owed.
        var early = try Script(try scriptProfile())
        let first = early.play(.grant, "2001", "gold", .autoRenewable, at: 1, outcome: nil, expires: 20)
        early.play(.grant, "2001", "gold", .autoRenewable, at: 5, outcome: nil, expires: 40)
        early.checker.record(first, outcome: .acknowledged(status: 200), at: 6)
        #expect(failures(early.check(AccountState(), at: 10)) == [.subscriptionState])
    }

    /// A resubscription refunded, the refund's reversal dropped at the harness's in-flight cap, then a
    /// `RENEWAL_EXTENDED` of the same transaction acknowledged: a target that never got the reversal keeps the refund.
    /// Data signed after a reversal makes the transaction owed again only once the target acknowledged the reversal.
    @Test func extensionAfterAReversalTheTargetNeverGotOwesNothing() throws {
        for reversalReached in [false, true] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "2001", "gold", .autoRenewable, at: 1, expires: 20)
            script.play(.revoke, "2001", "gold", .autoRenewable, at: 2, expires: 20)
            reverse(&script, reached: reversalReached)
            extend(&script, outcome: .acknowledged(status: 200))
            let results = script.check(AccountState(), at: 10)
            #expect(
                failures(results) == (reversalReached ? [.subscriptionState] : []),
                "reversal reached: \(reversalReached)"
            )
        }
    }

    /// The same, but the refund, signed before its reversal, is dispatched after it (delayed) and acknowledged after
    /// the extension: the target may keep the refund, so the books, though they drop a refund older than the reversal
    /// they hold, owe nothing until the reversal reaches the target.
    @Test func extensionAfterAReversalBookedBeforeItsRefundOwesNothingUntilTheReversalReaches() throws {
        for reversalReached in [false, true] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "2001", "gold", .autoRenewable, at: 1, expires: 20)
            reverse(&script, reached: reversalReached)
            let refund = script.play(
                .revoke,
                "2001",
                "gold",
                .autoRenewable,
                at: 3.5,
                outcome: nil,
                expires: 20,
                signedAt: 2
            )
            extend(&script, outcome: .acknowledged(status: 200))
            script.checker.record(refund, outcome: .acknowledged(status: 200), at: 6)
            let results = script.check(AccountState(), at: 10)
            #expect(
                failures(results) == (reversalReached ? [.subscriptionState] : []),
                "reversal reached: \(reversalReached)"
            )
        }
    }

    /// A resubscription acknowledged, its later expiry learned from an acknowledged status notification, then its
    /// refund and the series' next resubscription (ending sooner) both missed at the harness's in-flight cap: a target
    /// told of neither rightly entitles the series to the expiry it acknowledged. Until the data that ended it reaches
    /// the target, the check cannot decide.
    @Test func endTheTargetWasNeverToldOfIsNoFailure() throws {
        for refundReached in [false, true] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "2001", "gold", .autoRenewable, at: 1, expires: 40)
            endSeries(&script, refundReached: refundReached)
            let shown = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 40_000)])
            let failed = failures(script.check(shown, at: 30))
            #expect(failed.isEmpty != refundReached, "refund reached: \(refundReached), \(failed)")
        }
    }

    /// A resubscription refunded, the refund acknowledged; the series resubscribed again, acknowledged, and that refund
    /// missed at the harness's cap. A refund of the series is honored while another transaction of it runs by what the
    /// target acknowledged; once the second refund reaches the target, the entitlement fails.
    @Test func refundedSeriesStillRunningOnATransactionTheTargetKnowsUnrefundedIsNoFailure() throws {
        for secondRefundReached in [false, true] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "3001", "gold", .autoRenewable, at: 1, expires: 40)
            script.play(.revoke, "3001", "gold", .autoRenewable, at: 4, expires: 40)
            script.play(.grant, "3002", "gold", .autoRenewable, at: 5, expires: 45, original: "3001")
            let missed = DeliveryOutcome.notSent(reason: "in-flight cap 4096 reached", harnessLimited: true)
            script.play(
                .revoke,
                "3002",
                "gold",
                .autoRenewable,
                at: 6,
                outcome: secondRefundReached ? .acknowledged(status: 200) : missed,
                expires: 45,
                original: "3001"
            )
            let shown = AccountState(
                entitlements: [.init(productId: "gold", transactionId: "3002", expiresDate: start + 45_000)]
            )
            let failed = failures(script.check(shown, at: 30))
            #expect(failed.isEmpty != secondRefundReached, "second refund reached: \(secondRefundReached), \(failed)")
        }
    }
}

extension UnacknowledgedExtensionTests {
    /// A resubscription extended twice, the first `RENEWAL_EXTENDED`'s response lost, the second acknowledged; the
    /// refund and the series' next resubscription (ending sooner) missed at the harness's in-flight cap; then the App
    /// Store's retry of the first extension acknowledged. An expiry signed before the one the books hold changes
    /// nothing, whatever the arrival order, so a target that keeps the later-signed expiry passes.
    @Test func retryOfAnEarlierExtensionDoesNotShortenTheLaterOne() throws {
        for refundReached in [false, true] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "2001", "gold", .autoRenewable, at: 1, expires: 20)
            let first = script.play(
                .grant,
                "2001",
                "gold",
                .autoRenewable,
                at: 2,
                outcome: .indeterminate(reason: "hung-up"),
                notification: "RENEWAL_EXTENDED",
                expires: 30
            )
            script.play(.grant, "2001", "gold", .autoRenewable, at: 3, notification: "RENEWAL_EXTENDED", expires: 40)
            endSeries(&script, refundReached: refundReached)
            var retry = first
            retry.id += 1_000
            retry.copy = .retry
            retry.attempt = 1
            retry.at = 6
            script.checker.sent(retry, at: 6)
            script.checker.record(retry, outcome: .acknowledged(status: 200), at: 6.01)
            let shown = AccountState(
                entitlements: [.init(productId: "gold", transactionId: "2001", expiresDate: start + 40_000)]
            )
            let failed = failures(script.check(shown, at: 32))
            #expect(failed.isEmpty != refundReached, "refund reached: \(refundReached), \(failed)")
        }
    }
}

extension UnacknowledgedExtensionTests {
    /// A renewal extended, then upgraded; the upgrade's transaction acknowledged, its own `RENEWAL_EXTENDED` missed at
    /// the harness's in-flight cap. A period superseded by an upgrade the target acknowledged obliges it to nothing, so
    /// a target that ends the series at the upgrade's acknowledged expiry passes.
    @Test func extendedPeriodAnAcknowledgedUpgradeSupersededIsNotOwed() throws {
        for reached in [false, true] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "2001", "gold", .autoRenewable, at: 1, expires: 20)
            script.play(.grant, "2001", "gold", .autoRenewable, at: 2, notification: "RENEWAL_EXTENDED", expires: 50)
            // The upgrade, acknowledged on the device; then its own extension, reached or missed at the cap.
            script.play(
                .grant,
                "2002",
                "gold",
                .autoRenewable,
                at: 3,
                onDevice: true,
                expires: 30,
                original: "2001",
                supersedes: "2001"
            )
            let outcome: DeliveryOutcome =
                reached ? .acknowledged(status: 200) : .notSent(reason: "in-flight cap", harnessLimited: true)
            script.play(
                .grant,
                "2002",
                "gold",
                .autoRenewable,
                at: 4,
                outcome: outcome,
                notification: "RENEWAL_EXTENDED",
                expires: 45,
                original: "2001"
            )
            let failed = failures(script.check(AccountState(), at: 35))
            #expect(failed == (reached ? [.subscriptionState] : []), "upgrade's extension reached: \(reached)")
        }
    }
}

extension UnacknowledgedExtensionTests {
    /// A resubscription extended, the `RENEWAL_EXTENDED` missed at the harness's in-flight cap, then a
    /// `DID_CHANGE_RENEWAL_PREF` carrying the extended transaction acknowledged; its refund and the series' next
    /// resubscription missed too. Any acknowledged notification tells the target the transaction it carries, so a
    /// target that takes the expiry from the renewal preference's transaction info rightly entitles the series to it.
    @Test func expiryCarriedByARenewalPreferenceChangeIsKnownToTheTarget() throws {
        for refundReached in [false, true] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "2001", "gold", .autoRenewable, at: 1, expires: 20)
            let missed = DeliveryOutcome.notSent(reason: "in-flight cap 4096 reached", harnessLimited: true)
            script.play(
                .grant,
                "2001",
                "gold",
                .autoRenewable,
                at: 2,
                outcome: missed,
                notification: "RENEWAL_EXTENDED",
                expires: 40
            )
            script.play(
                .none,
                "2001",
                "gold",
                .autoRenewable,
                at: 3,
                notification: "DID_CHANGE_RENEWAL_PREF",
                expires: 40
            )
            endSeries(&script, refundReached: refundReached)
            let shown = AccountState(
                entitlements: [.init(productId: "gold", transactionId: "2001", expiresDate: start + 40_000)]
            )
            let failed = failures(script.check(shown, at: 32))
            #expect(failed.isEmpty != refundReached, "refund reached: \(refundReached), \(failed)")
        }
    }
}

extension UnacknowledgedExtensionTests {
    /// A resubscription whose purchase and refund were missed at the harness's in-flight cap, its `REFUND_REVERSED`
    /// dispatched, then its `RENEWAL_EXTENDED` missed, then the reversal acknowledged: the target knows the transaction
    /// from the reversal alone. An acknowledged reversal tells the target the expiry it carries, no later one.
    @Test func reversalAcknowledgedAfterAMissedExtensionOwesItsOwnExpiry() throws {
        for extensionReached in [false, true] {
            var script = try Script(try scriptProfile())
            let missed = DeliveryOutcome.notSent(reason: "in-flight cap 4096 reached", harnessLimited: true)
            script.play(.grant, "2001", "gold", .autoRenewable, at: 1, outcome: missed, expires: 20)
            script.play(.revoke, "2001", "gold", .autoRenewable, at: 2, outcome: missed, expires: 20)
            let reversal = script.play(
                .reinstate,
                "2001",
                "gold",
                .autoRenewable,
                at: 3,
                outcome: nil,
                notification: "REFUND_REVERSED",
                expires: 20
            )
            script.play(
                .grant,
                "2001",
                "gold",
                .autoRenewable,
                at: 4,
                outcome: extensionReached ? .acknowledged(status: 200) : missed,
                notification: "RENEWAL_EXTENDED",
                expires: 40
            )
            script.checker.record(reversal, outcome: .acknowledged(status: 200), at: 5)
            let failed = failures(script.check(AccountState(), at: 25))
            #expect(failed == (extensionReached ? [.subscriptionState] : []), "extension reached: \(extensionReached)")
        }
    }
}

extension UnacknowledgedExtensionTests {
    /// A resubscription whose purchase and both `RENEWAL_EXTENDED` were missed at the harness's in-flight cap, the
    /// target learning it from two acknowledged `DID_CHANGE_RENEWAL_STATUS`, the second carrying the extended expiry;
    /// its refund and the series' next resubscription missed too. A transaction known only from such notifications runs
    /// as they told, so a target that entitles the series to that expiry passes.
    @Test func transactionKnownOnlyFromStatusNotificationsStillRunsAsTheyTold() throws {
        for refundReached in [false, true] {
            var script = try Script(try scriptProfile())
            let missed = DeliveryOutcome.notSent(reason: "in-flight cap 4096 reached", harnessLimited: true)
            script.play(.grant, "2001", "gold", .autoRenewable, at: 1, outcome: missed, expires: 20)
            let status = "DID_CHANGE_RENEWAL_STATUS"
            script.play(.none, "2001", "gold", .autoRenewable, at: 2, notification: status, expires: 20)
            script.play(.grant, "2001", "gold", .autoRenewable, at: 3, outcome: missed, expires: 40)
            script.play(.none, "2001", "gold", .autoRenewable, at: 3.5, notification: status, expires: 40)
            endSeries(&script, refundReached: refundReached)
            let shown = AccountState(
                entitlements: [.init(productId: "gold", transactionId: "2001", expiresDate: start + 40_000)]
            )
            let failed = failures(script.check(shown, at: 32))
            #expect(failed.isEmpty != refundReached, "refund reached: \(refundReached), \(failed)")
        }
    }
    /// A resubscription acknowledged only through its extension, then an upgrade ending sooner, missed at the harness's
    /// cap, while an older period of the series is booked late through its acknowledged refund. Later is by purchase,
    /// not by booking: the older period does not supersede the resubscription, so a target never told of the upgrade
    /// rightly still entitles the series.
    @Test func olderPeriodBookedLateDoesNotSupersedeTheCurrentOne() throws {
        for upgradeReached in [false, true] {
            let missed = DeliveryOutcome.notSent(reason: "in-flight cap 4096 reached", harnessLimited: true)
            var script = try Script(try scriptProfile())
            script.play(.grant, "2001", "gold", .autoRenewable, at: 1, outcome: missed, expires: 10)
            script.play(
                .grant,
                "2001",
                "gold",
                .autoRenewable,
                at: 2,
                notification: "RENEWAL_EXTENDED",
                expires: 40
            )
            script.play(
                .grant,
                "2002",
                "gold",
                .autoRenewable,
                at: 3,
                outcome: upgradeReached ? .acknowledged(status: 200) : missed,
                expires: 20,
                original: "2001",
                supersedes: "2001"
            )
            // The refund of an older period: the series stays active.
            script.play(
                .revoke,
                "1999",
                "gold",
                .autoRenewable,
                at: 4,
                expires: 1,
                original: "2001",
                signedAt: 0.5,
                status: .active
            )
            let shown = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 40_000)])
            let failed = failures(script.check(shown, at: 30))
            #expect(failed == (upgradeReached ? [.subscriptionState] : []), "upgrade reached: \(upgradeReached)")
        }
    }
}
