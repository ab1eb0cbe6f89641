import AppStoreModel
import Chaos
import Checking
import Foundation
import Profile
import Simulation
import Testing

/// A profile with one product of each kind, and the target given as JSON5 (a whole run may set the rest).
/// Scripts play each attempt by hand, so App Store retries are off unless a test plays them (`faults: "{}"`).
func scriptProfile(
    target: String = "{ embeddedLedger: true }",
    faults: String = "{ appStoreRetries: { enabled: false } }",
    accounts: Int = 4,
    actionMix: String = "{ consumable: 1, nonConsumable: 1, nonRenewing: 1 }",
    schedule: String = #"[{ kind: "constant", rate: 4, seconds: 5 }]"#
) throws -> Profile {
    let text = """
        {
          name: "script", seed: 3,
          target: \(target),
          catalog: {
            groups: [{ id: "g" }],
            products: [
              { id: "coins", type: "consumable", priceMilli: 990 },
              { id: "pro", type: "nonConsumable", priceMilli: 4990 },
              { id: "season.pass", type: "nonRenewing", priceMilli: 2990, periodSeconds: 100 },
              { id: "gold", type: "autoRenewable", group: "g", level: 1, priceMilli: 9990, periodSeconds: 100 },
            ],
          },
          population: { accounts: \(accounts) },
          actionMix: \(actionMix),
          schedule: \(schedule),
          faults: \(faults),
        }
        """
    return try Profile.decode(Data(text.utf8), file: "script.json5")
}

/// Hand-written deliveries for one account, made from a planned webhook and a planned device delivery, so
/// that a test can play an exact sequence (buy, refund, buy again...) and its outcomes.
struct Script {
    let profile: Profile
    let checker: Checker
    let webhook: PlannedDelivery
    let device: PlannedDelivery
    let token = "6f1c2a44-0000-4000-8000-000000000001"
    var nextID: UInt64 = 900_000

    init(_ profile: Profile, foldAbove: Int = 16) throws {
        self.profile = profile
        var options = Checker.Options()
        options.foldAbove = foldAbove
        checker = Checker(profile: profile, startMillis: start, options: options)
        let planned = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile))
        func clean(_ delivery: PlannedDelivery) -> PlannedDelivery {
            var copy = delivery
            copy.faults = []
            copy.network = nil
            copy.forgery = nil
            copy.crashRelaunchSeconds = nil
            copy.afterSuccessDelays = []
            copy.copy = .original
            copy.attempt = 0
            return copy
        }
        webhook = clean(
            try #require(
                planned.first {
                    if case .notification = $0.action.delivery { $0.action.truth.kind == .grant } else { false }
                }
            )
        )
        device = clean(
            try #require(planned.first { if case .device = $0.action.delivery { true } else { false } })
        )
    }

    /// Dispatches one delivery at `t` and records its outcome (nil: no outcome yet).
    @discardableResult
    mutating func play(
        _ kind: Truth.Kind,
        _ transaction: String,
        _ product: String,
        _ type: ProductKind,
        at t: Double,
        outcome: DeliveryOutcome? = .acknowledged(status: 200),
        notification: String? = nil,
        onDevice: Bool = false,
        copy: Copy = .original,
        attempt: Int = 0,
        forgery: String? = nil,
        expires: Double? = nil,
        original: String? = nil,
        supersedes: String? = nil,
        signedAt: Double? = nil,
        status: SubscriptionStatus? = nil
    ) -> PlannedDelivery {
        var delivery = onDevice ? device : webhook
        nextID += 1
        delivery.id = nextID
        delivery.forgery = forgery
        delivery.at = t
        delivery.copy = copy
        delivery.attempt = attempt
        delivery.action.appAccountToken = token
        var truth = Truth(kind: kind, effectiveDate: start + Int64((signedAt ?? t) * 1000))
        truth.productId = product
        truth.productType = type
        truth.transactionId = transaction
        truth.originalTransactionId = original ?? transaction
        truth.supersedes = supersedes
        if type == .nonRenewing && kind == .grant { truth.expiresDate = truth.effectiveDate + 100_000 }
        if type == .autoRenewable {
            truth.groupId = "g"
            truth.status = status ?? (kind == .revoke ? .revoked : .active)
            truth.expiresDate = start + 1_000 + 100_000
        }
        if let expires { truth.expiresDate = start + Int64(expires * 1000) }
        delivery.action.truth = truth
        if case .notification(var note) = delivery.action.delivery {
            note.notificationType = NotificationTypeV2(
                rawValue: notification ?? (kind == .revoke ? "REFUND" : "ONE_TIME_CHARGE")
            )
            delivery.action.delivery = .notification(note)
        }
        checker.sent(delivery, at: t)
        if let outcome { checker.record(delivery, outcome: outcome, at: t + 0.01) }
        return delivery
    }

    /// Plays attempt `attempt` of the device's delivery of a purchase: the first, or a redelivery of the
    /// unfinished transaction (the device makes up to five).
    mutating func playDeviceAttempt(
        _ attempt: Int,
        _ transaction: String,
        _ product: String,
        _ type: ProductKind,
        at t: Double,
        outcome: DeliveryOutcome
    ) {
        play(
            .grant,
            transaction,
            product,
            type,
            at: t,
            outcome: outcome,
            onDevice: true,
            copy: attempt == 0 ? .original : .redelivery,
            attempt: attempt
        )
    }

    /// Buys `count` coins, each acknowledged, from `t` on: enough transactions to make the checker fold.
    mutating func buyCoins(_ count: Int, from t: Double, first id: Int) {
        for i in 0..<count { play(.grant, String(id + i), "coins", .consumable, at: t + Double(i) * 0.1) }
    }

    func check(_ state: AccountState, at t: Double, final: Bool = true) -> [CheckResult] {
        checker.check(account: token, state: state, at: t, final: final)
    }
}

func witness(_ results: [CheckResult], _ invariant: Invariant) -> Witness? {
    for result in results where result.invariant == invariant {
        if case .fail(let witness) = result.outcome { return witness }
    }
    return nil
}

struct TrustworthyVerdictTests {
    // MARK: - Item 1: a folded purchase still counts; the non-renewing contract

    /// Bought, refunded, bought again, then enough traffic that the second purchase folds away: the probe shows the
    /// second purchase's entitlement, which is owed.
    @Test func foldedRepurchaseStillCountsAfterARefund() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1108962000002477", "season.pass", .nonRenewing, at: 10)
        script.play(.revoke, "1108962000002477", "season.pass", .nonRenewing, at: 60)
        script.play(.grant, "1108962000018300", "season.pass", .nonRenewing, at: 127)
        // 40 coin purchases, the last ones long after the pass's period, so the second pass folds.
        script.buyCoins(20, from: 130, first: 1_108_962_000_020_000)
        script.buyCoins(20, from: 300, first: 1_108_962_000_030_000)
        let state = AccountState(
            entitlements: [.init(productId: "season.pass", transactionId: "1108962000018300")],
            balances: ["coins": 40]
        )
        let results = script.check(state, at: 321)
        #expect(failures(results).isEmpty, "\(results)")
        #expect(script.checker.verdict(unchecked: []).outcome == .pass)
    }

    /// Bought, refunded, gone, bought again; the probe shows the product, but its answer reaches the checker (through
    /// the probe's `transform`) only after the second purchase's refund was dispatched. At the probe's time the second
    /// purchase was owed, so this is no regression.
    @Test func repurchaseRefundedAfterTheProbeIsNoRegression() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 3)
        #expect(failures(script.check(AccountState(), at: 5, final: false)).isEmpty)
        script.play(.grant, "1002", "pro", .nonConsumable, at: 10)
        script.play(.revoke, "1002", "pro", .nonConsumable, at: 12)
        let shown = AccountState(entitlements: [.init(productId: "pro")])
        #expect(failures(script.check(shown, at: 11, final: false)).isEmpty)
        // Once both refunds stand, the product coming back is still a regression.
        let found = try #require(witness(script.check(shown, at: 20, final: false), .noStaleRegression))
        #expect(found.summary.contains("came back"))
    }

    /// Bought, refunded, gone, bought again; the second refund, signed before the probe asked, reaches the target only
    /// after it (a reordered webhook, a device delivery), and its acknowledgment is booked before the probe's answer is
    /// checked. What stood when the probe asked is what it must show.
    @Test func refundAcknowledgedAfterTheProbeAskedIsNoRegression() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 3)
        #expect(failures(script.check(AccountState(), at: 5, final: false)).isEmpty)
        script.play(.grant, "1002", "pro", .nonConsumable, at: 10)
        let refund = script.play(.revoke, "1002", "pro", .nonConsumable, at: 12, outcome: nil)
        script.checker.record(refund, outcome: .acknowledged(status: 200), at: 12.6)
        let shown = AccountState(entitlements: [.init(productId: "pro")])
        // Asked at 12.5: answered before the acknowledgment (checked late), or after it (in flight meanwhile).
        for answered in [12.52, 12.7] {
            let results = script.checker.check(
                account: script.token,
                state: shown,
                at: answered,
                final: false,
                asked: 12.5
            )
            #expect(failures(results).isEmpty, "answered at \(answered): \(results)")
        }
        // Asked once the refund stood, the product coming back is a regression.
        let found = try #require(witness(script.check(shown, at: 20, final: false), .noStaleRegression))
        #expect(found.summary.contains("came back"))
    }

    /// Coins refunded, folded away under later purchases, then the refund reversed much later: the target credits them
    /// again, which the oracle must owe.
    @Test func refundReversedAfterFoldingIsOwedAgain() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "2001", "coins", .consumable, at: 1)
        script.play(.revoke, "2001", "coins", .consumable, at: 2)
        script.buyCoins(40, from: 10, first: 3000)
        script.play(.reinstate, "2001", "coins", .consumable, at: 30, notification: "REFUND_REVERSED")
        script.play(.grant, "2002", "coins", .consumable, at: 31)
        script.play(.revoke, "2002", "coins", .consumable, at: 32)
        #expect(failures(script.check(AccountState(balances: ["coins": 41]), at: 40)).isEmpty)
        // The later refund is still taken back.
        #expect(failures(script.check(AccountState(balances: ["coins": 42]), at: 41)).contains(.revocationHonored))
    }

    /// A refunded only purchase still must not be entitled, folded neighbours or not.
    @Test func refundedOnlyNonRenewingPurchaseIsStillCaughtAfterFolding() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "season.pass", .nonRenewing, at: 10)
        script.play(.revoke, "1001", "season.pass", .nonRenewing, at: 20)
        script.buyCoins(40, from: 200, first: 5000)
        let state = AccountState(entitlements: [.init(productId: "season.pass")], balances: ["coins": 40])
        let found = try #require(witness(script.check(state, at: 321), .revocationHonored))
        #expect(found.summary.contains("its only purchase 1001 was refunded"))
        #expect(found.entries.contains { $0.sentence.contains("REFUND") })
    }

    /// Entitled for at least its catalog period (lost if not); past it, either answer is accepted.
    @Test(arguments: [
        (50.0, false, Invariant.noLostPurchase), (50, true, nil), (200, false, nil), (200, true, nil),
    ])
    func nonRenewingIsOwedForItsPeriodThenEitherAnswerHolds(t: Double, entitled: Bool, fails: Invariant?) throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "season.pass", .nonRenewing, at: 10)
        let state = AccountState(entitlements: entitled ? [.init(productId: "season.pass", transactionId: "1001")] : [])
        #expect(failures(script.check(state, at: t)) == (fails.map { [$0] } ?? []))
    }

    // MARK: - Item 2: over-revocation

    @Test func refundThatRevokesAnotherPurchaseBreaksRevocationHonored() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        script.play(.grant, "1002", "pro", .nonConsumable, at: 2)
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 3)
        let results = script.check(AccountState(), at: 30)
        #expect(failures(results).contains(.noLostPurchase))
        let found = try #require(witness(results, .revocationHonored))
        #expect(found.summary.contains("revoked too much"))
        #expect(found.summary.contains("1001") && found.summary.contains("1002"))
        // The refund of A and the acknowledged purchase of B are both in the witness.
        #expect(found.entries.contains { $0.transactionId == "1001" && $0.sentence.contains("REFUND") })
        #expect(
            found.entries.contains { $0.transactionId == "1002" && $0.sentence.contains("was acknowledged with 200") }
        )
        // A correct target keeps B: nothing fails.
        let kept = AccountState(entitlements: [.init(productId: "pro", transactionId: "1002")])
        #expect(failures(script.check(kept, at: 31)).isEmpty)
    }

    /// A backend whose refund of one coins purchase zeroes the balance: the witness of the lost purchase names the
    /// refund that took it, not only the purchase's acknowledgments.
    @Test func consumableLostAfterAnotherPurchasesRefundNamesThatRefund() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "coins", .consumable, at: 1)
        script.play(.grant, "1002", "coins", .consumable, at: 2)
        script.play(.revoke, "1001", "coins", .consumable, at: 3)
        let results = script.check(AccountState(balances: ["coins": 0]), at: 10)
        #expect(failures(results) == [.noLostPurchase])
        let found = try #require(witness(results, .noLostPurchase))
        #expect(found.summary.contains("refund of another purchase of coins, transaction 1001"))
        #expect(found.entries.contains { $0.transactionId == "1001" && $0.sentence.contains("REFUND") })
        #expect(found.entries.contains { $0.transactionId == "1002" })
        // Without a refund the summary says only what is missing.
        var plain = try Script(try scriptProfile())
        plain.play(.grant, "1002", "coins", .consumable, at: 2)
        let lost = try #require(witness(plain.check(AccountState(balances: ["coins": 0]), at: 10), .noLostPurchase))
        #expect(lost.summary == "the target shows 0 coins but acknowledged purchases of 1")
    }

    /// pro.unlock bought and refunded, bought again 35 s later, and the second purchase never granted: the refund
    /// cannot have taken a purchase made after it, so that is a lost purchase, not an over-revocation.
    @Test func purchaseMissingAfterAnEarlierRefundIsLostNotOverRevoked() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 21)
        script.play(.grant, "1002", "pro", .nonConsumable, at: 56)
        let results = script.check(AccountState(), at: 108)
        #expect(failures(results) == [.noLostPurchase])
        let found = try #require(witness(results, .noLostPurchase))
        #expect(found.summary.contains("acknowledged purchase 1002"))
    }

    /// An excess of coins beside a forgery the target rejected is a double grant; beside one it acknowledged, a
    /// credited forgery: only forgeries the target may have credited explain an excess.
    @Test func excessBesideRejectedForgeriesIsADoubleGrant() throws {
        for forgedOutcome in [DeliveryOutcome.rejected(status: 400), .acknowledged(status: 200)] {
            var script = try Script(try scriptProfile())
            script.play(.grant, "1001", "coins", .consumable, at: 1)
            script.play(.grant, "9001", "coins", .consumable, at: 2, outcome: forgedOutcome, forgery: "bad-signature")
            let found = failures(script.check(AccountState(balances: ["coins": 2]), at: 5, final: false))
            #expect(found == [forgedOutcome.isAcknowledged ? .noUnlockWithoutVerifiedPurchase : .noDoubleGrant])
        }
    }

    /// Two concurrent copies of one coins purchase both credited, beside a second purchase whose every attempt was
    /// refused (the backend was restarting): a purchase no attempt brought cannot have been credited by a target that
    /// learns of purchases only from deliveries, so it does not hide the excess.
    @Test func purchaseEveryAttemptOfWhichWasRefusedDoesNotExcuseAnExcess() throws {
        let refused = DeliveryOutcome.notSent(reason: "refused: connection refused")
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "coins", .consumable, at: 1)
        script.play(.grant, "1002", "coins", .consumable, at: 2, outcome: refused)
        script.play(.grant, "1002", "coins", .consumable, at: 2, outcome: refused, onDevice: true)
        let results = script.check(AccountState(balances: ["coins": 2]), at: 10)
        #expect(failures(results) == [.noDoubleGrant])
        let found = try #require(witness(results, .noDoubleGrant))
        #expect(found.summary.contains("add up to 1 (1 more were sent, but every attempt was refused"))
        // An attempt that got no answer may have been credited; so may one still in flight.
        var unanswered = try Script(try scriptProfile())
        unanswered.play(.grant, "1001", "coins", .consumable, at: 1)
        unanswered.play(.grant, "1002", "coins", .consumable, at: 2, outcome: .indeterminate(reason: "timeout"))
        #expect(failures(unanswered.check(AccountState(balances: ["coins": 2]), at: 10)).isEmpty)
        var inFlight = try Script(try scriptProfile())
        inFlight.play(.grant, "1001", "coins", .consumable, at: 1)
        inFlight.play(.grant, "1002", "coins", .consumable, at: 2, outcome: nil)
        #expect(failures(inFlight.check(AccountState(balances: ["coins": 2]), at: 2.5, final: false)).isEmpty)
    }

    /// The pulling example backend's probe maps its credits table row by row (`count: 1` each): a transaction
    /// credited twice is listed twice, and that is a double grant.
    @Test func transactionListedTwiceInTheGrantsIsGrantedTwice() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        let once = AccountState.Grant(transactionId: "1001", count: 1)
        var state = AccountState(entitlements: [.init(productId: "pro", transactionId: "1001")], grants: [once])
        #expect(failures(script.check(state, at: 10)).isEmpty)
        state.grants = [once, once]
        let results = script.check(state, at: 11)
        #expect(failures(results) == [.noDoubleGrant])
        #expect(try #require(witness(results, .noDoubleGrant)).summary.contains("granted transaction 1001 2 times"))
    }

    /// pro.unlock bought and refunded, then a tampered forgery of it acknowledged, and the wallet still lists it: for a
    /// backend that honours refunds and trusts forgeries the forgery is the plainer reading, an unlock without a
    /// verified purchase. A refused forgery leaves the refund not honored as the only reading.
    @Test func unlockAfterEveryRefundThatAForgeryExplainsIsAnUnlock() throws {
        let entitled = AccountState(entitlements: [.init(productId: "pro")])
        // `paystorm detect` with ignore-refund: a forgery in flight while the ledger restarted got no answer; the
        // ledger refuses forgeries, so the refund not honored stays the reading.
        let outcomes: [DeliveryOutcome] = [
            .acknowledged(status: 200), .rejected(status: 400), .indeterminate(reason: "reset"),
        ]
        for forgedOutcome in outcomes {
            var script = try Script(try scriptProfile())
            script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
            script.play(.revoke, "1001", "pro", .nonConsumable, at: 2)
            script.play(
                .grant,
                "9001",
                "pro",
                .nonConsumable,
                at: 3,
                outcome: forgedOutcome,
                forgery: "tampered-payload"
            )
            let results = script.check(entitled, at: 10)
            if forgedOutcome.isAcknowledged {
                #expect(failures(results) == [.noUnlockWithoutVerifiedPurchase])
                let found = try #require(witness(results, .noUnlockWithoutVerifiedPurchase))
                #expect(found.summary.contains("whose every verified purchase was refunded"))
                #expect(found.summary.contains("a forgery was credited (or a refund was not honored)"))
            } else {
                #expect(failures(results) == [.revocationHonored])
            }
        }
    }

    /// A pending Ask to Buy of pro.unlock beside a refunded purchase of it: the entitlement is the pending unlock's.
    @Test func unlockAfterEveryRefundBesideAPendingAskToBuyIsAnUnlock() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 2)
        script.play(.pending, "1002", "pro", .nonConsumable, at: 3)
        let results = script.check(AccountState(entitlements: [.init(productId: "pro")]), at: 10)
        #expect(failures(results) == [.noUnlockWithoutVerifiedPurchase])
        #expect(try #require(witness(results, .noUnlockWithoutVerifiedPurchase)).summary.contains("Ask to Buy"))
    }

    /// Coins credited twice and then folded away, so their product and quantity are no longer kept: an excess over the
    /// refunds that they may explain is undecided, not a refund not taken back; beyond it, it is one.
    @Test func excessThatAFoldedDoubleCreditMayExplainIsUndecided() throws {
        var script = try Script(try scriptProfile(), foldAbove: 2)
        script.buyCoins(6, from: 1, first: 1001)
        script.play(.grant, "2001", "coins", .consumable, at: 3)
        script.play(.revoke, "2001", "coins", .consumable, at: 4)
        var grants = (1001...1006).map { AccountState.Grant(transactionId: String($0), count: 1) }
        grants.append(.init(transactionId: "1001", count: 1))
        let results = script.check(AccountState(balances: ["coins": 7], grants: grants), at: 10)
        #expect(failures(results) == [.noDoubleGrant])
        #expect(
            results.contains {
                if case .unknown = $0.outcome { $0.invariant == .revocationHonored } else { false }
            }
        )
        let beyond = script.check(AccountState(balances: ["coins": 8], grants: grants), at: 11)
        #expect(failures(beyond).contains(.revocationHonored))
    }

    /// The reference ledger acknowledges a bare claim (`bare-product-id`, sent as a device report) with 202 and grants
    /// nothing. Beside a refund, an unlock is the refund's; beside a double grant the probe's grants show, the excess
    /// is the double grant's, not a credited forgery.
    @Test func acknowledgedBareClaimIsNoEvidenceOfACreditedForgery() throws {
        var unlock = try Script(try scriptProfile())
        unlock.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        unlock.play(.revoke, "1001", "pro", .nonConsumable, at: 2)
        unlock.play(.grant, "9001", "pro", .nonConsumable, at: 3, onDevice: true, forgery: "bare-product-id")
        let results = unlock.check(AccountState(entitlements: [.init(productId: "pro")]), at: 10)
        #expect(failures(results) == [.revocationHonored])
        // An Ask to Buy reported pending does not explain an entitlement through the refunded transaction (detect
        // at 10× with ignore-refund: 55 such were filed as pending unlocks).
        var pending = try Script(try scriptProfile())
        pending.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        pending.play(.revoke, "1001", "pro", .nonConsumable, at: 2)
        pending.play(.pending, "1002", "pro", .nonConsumable, at: 3)
        let named = AccountState(entitlements: [.init(productId: "pro", transactionId: "1001")])
        #expect(failures(pending.check(named, at: 10)) == [.revocationHonored])

        var coins = try Script(try scriptProfile())
        coins.play(.grant, "1001", "coins", .consumable, at: 1)
        coins.play(.grant, "1002", "coins", .consumable, at: 2)
        coins.play(.revoke, "1001", "coins", .consumable, at: 3)
        coins.play(.grant, "9001", "coins", .consumable, at: 4, onDevice: true, forgery: "bare-product-id")
        coins.play(.grant, "1002", "coins", .consumable, at: 5, copy: .delayedDuplicate)
        let doubled: [AccountState.Grant] = [
            .init(transactionId: "1001", count: 1), .init(transactionId: "1002", count: 2),
        ]
        let excess = coins.check(AccountState(balances: ["coins": 2], grants: doubled), at: 10)
        #expect(failures(excess) == [.noDoubleGrant])

        // A signed forgery answered "already had it" (a body rule read `{"granted": 0}`): the target says it
        // credited nothing, so the refund not taken back is the reading.
        var said = try Script(try scriptProfile())
        said.play(.grant, "1001", "coins", .consumable, at: 1)
        said.play(.grant, "1002", "coins", .consumable, at: 2)
        said.play(.revoke, "1001", "coins", .consumable, at: 3)
        let nothing = DeliveryOutcome.acknowledged(status: 200, alreadyHad: true)
        said.play(.grant, "9001", "coins", .consumable, at: 4, outcome: nothing, forgery: "bad-signature")
        #expect(failures(said.check(AccountState(balances: ["coins": 2]), at: 10)) == [.revocationHonored])
    }

    /// A purchase delivery acknowledged after its refund resurrects the unlock (a stale overwrite), beside an Ask to
    /// Buy of it the backend ignored: the refund not honored is the reading, not the pending unlock.
    @Test func unlockAfterARefundAndAReplayOfThePurchaseIsARefundNotHonored() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        script.play(.pending, "1002", "pro", .nonConsumable, at: 2)
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 3)
        script.play(.grant, "1001", "pro", .nonConsumable, at: 4, copy: .delayedDuplicate)
        let results = script.check(AccountState(entitlements: [.init(productId: "pro")]), at: 10)
        #expect(failures(results) == [.revocationHonored])
        let found = try #require(witness(results, .revocationHonored))
        #expect(found.summary.contains("(or the Ask to Buy of it reported pending unlocked it)"))
        // `paystorm detect` at 10× with unlock-on-pending: a replay acknowledged before the pending report (a
        // correct target answers a replay of a refunded purchase with 200) leaves the pending unlock the reading.
        var later = try Script(try scriptProfile())
        later.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        later.play(.revoke, "1001", "pro", .nonConsumable, at: 2)
        later.play(.grant, "1001", "pro", .nonConsumable, at: 3, copy: .delayedDuplicate)
        later.play(.pending, "1002", "pro", .nonConsumable, at: 4)
        let pending = later.check(AccountState(entitlements: [.init(productId: "pro")]), at: 10)
        #expect(failures(pending) == [.noUnlockWithoutVerifiedPurchase])
        // The example backend with pending-unlock at 10×: an approved Ask to Buy's own delivery arrived after its
        // refund and was answered `{"granted": false}` (already had it): no replay was taken.
        var answered = try Script(try scriptProfile())
        answered.play(.pending, "1002", "pro", .nonConsumable, at: 1)
        answered.play(.grant, "1002", "pro", .nonConsumable, at: 2)
        answered.play(.revoke, "1002", "pro", .nonConsumable, at: 3)
        let alreadyHad = DeliveryOutcome.acknowledged(status: 200, alreadyHad: true)
        answered.play(.grant, "1002", "pro", .nonConsumable, at: 4, outcome: alreadyHad, onDevice: true)
        let unlocked = answered.check(AccountState(entitlements: [.init(productId: "pro")]), at: 10)
        #expect(failures(unlocked) == [.noUnlockWithoutVerifiedPurchase])
    }

    /// A probe showed pro.unlock unlocked by an Ask to Buy reported pending before any purchase of it; later a refunded
    /// purchase's webhook arrives after its refund (answered 200, as Apple's contract asks) and after the last pending
    /// report. The target is seen to unlock on pending reports, so the final entitlement is still the unlock's, not a
    /// refund not honored. Without that earlier sight, the replay stays the reading.
    @Test(arguments: [true, false])
    func unlockSeenOnAPendingReportOutweighsALaterReplay(seen: Bool) throws {
        var script = try Script(try scriptProfile())
        script.play(.pending, "1001", "pro", .nonConsumable, at: 1)
        let early = script.check(AccountState(entitlements: seen ? [.init(productId: "pro")] : []), at: 2, final: false)
        #expect(failures(early) == (seen ? [.noUnlockWithoutVerifiedPurchase] : []))
        script.play(.grant, "1002", "pro", .nonConsumable, at: 3)
        script.play(.revoke, "1002", "pro", .nonConsumable, at: 4)
        script.play(.pending, "1003", "pro", .nonConsumable, at: 5)
        script.play(.grant, "1002", "pro", .nonConsumable, at: 6, copy: .delayedDuplicate)
        let final = script.check(AccountState(entitlements: [.init(productId: "pro")]), at: 10)
        #expect(failures(final) == (seen ? [.noUnlockWithoutVerifiedPurchase] : [.revocationHonored]))
    }

    /// The example backend with pending-unlock: its pending placeholder of a subscription product is an owned
    /// product in its wallet (no expiry). Once the series was refunded, that entitlement is the pending unlock's,
    /// filed as an unlock, not also as a refund not honored. Without the pending report, or shown with the
    /// series' expiry, it is the series' own: a refund not honored.
    @Test(arguments: [
        (true, false, Invariant.noUnlockWithoutVerifiedPurchase),
        (false, false, .revocationHonored),
        (true, true, .revocationHonored),
    ])
    func subscriptionEntitledAfterItsRefundBesideAPendingAskToBuyIsAnUnlock(
        askedToBuy: Bool,
        withExpiry: Bool,
        fails: Invariant
    ) throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "2001", "gold", .autoRenewable, at: 1)
        script.play(.revoke, "2001", "gold", .autoRenewable, at: 2)
        if askedToBuy { script.play(.pending, "2002", "gold", .autoRenewable, at: 3) }
        let expires = withExpiry ? start + 101_000 : nil
        let shown = AccountState(entitlements: [.init(productId: "gold", expiresDate: expires)])
        // At the refunded period's own expiry (the final probe of a 10× run): a revoked series is owed nothing
        // whatever its expiry, so the reading is the same.
        let results = script.check(shown, at: 101)
        #expect(failures(results) == [fails])
        if fails == .noUnlockWithoutVerifiedPurchase {
            let found = try #require(witness(results, .noUnlockWithoutVerifiedPurchase))
            #expect(found.summary.contains("no subscription of its group is owed one"))
            #expect(found.summary.contains("Ask to Buy"))
        }
    }

    /// A coins purchase credited twice (its credits probe lists the transaction twice) beside another purchase's
    /// refund, taken back: the excess is the double grant's, not also a refund not taken back; beyond what the double
    /// credit explains, it is.
    @Test func excessThatADoubleCreditExplainsIsNotARefundNotTakenBack() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "coins", .consumable, at: 1)
        script.play(.grant, "1002", "coins", .consumable, at: 2)
        script.play(.revoke, "1002", "coins", .consumable, at: 3)
        let doubled: [AccountState.Grant] = [
            .init(transactionId: "1001", count: 1), .init(transactionId: "1001", count: 1),
        ]
        let results = script.check(AccountState(balances: ["coins": 2], grants: doubled), at: 10)
        #expect(failures(results) == [.noDoubleGrant])
        let beyond = script.check(AccountState(balances: ["coins": 3], grants: doubled), at: 11)
        #expect(failures(beyond) == [.noDoubleGrant, .revocationHonored])
    }

    /// A refunded unlock disappears, then a later Ask to Buy of it is reported pending and the target unlocks it again:
    /// the return is the pending unlock's, not a stale regression; without the pending report it is one.
    @Test(arguments: [true, false])
    func unlockBackAfterItsRefundThroughAPendingAskToBuyIsNoRegression(askedToBuy: Bool) throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 2)
        #expect(failures(script.check(AccountState(), at: 3, final: false)).isEmpty)
        if askedToBuy { script.play(.pending, "1002", "pro", .nonConsumable, at: 4) }
        let results = script.check(AccountState(entitlements: [.init(productId: "pro")]), at: 5, final: false)
        #expect(failures(results).contains(.noStaleRegression) == !askedToBuy)
        #expect(failures(results).contains(.noUnlockWithoutVerifiedPurchase) == askedToBuy)
    }

    /// Two series in one group (a member's own and one shared with it), the first refunded: the target's
    /// entitlement of the group without a transaction ID (as a wallet shows it) may be the other series', so it
    /// proves no refund not honored. `FamilyCheckingTests` covers entitlements that name their transaction.
    @Test func groupEntitlementOfALaterSeriesIsNoRefundNotHonored() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "2001", "gold", .autoRenewable, at: 1)
        script.play(.revoke, "2001", "gold", .autoRenewable, at: 2)
        script.play(.grant, "2002", "gold", .autoRenewable, at: 3)
        let shown = AccountState(entitlements: [.init(productId: "gold", expiresDate: start + 101_000)])
        #expect(failures(script.check(shown, at: 10)).isEmpty)
    }

    /// A target served the App Store Server API may learn of a purchase from its transaction history, whatever
    /// became of the deliveries: every purchase sent counts.
    @Test func targetThatCanAskTheAppStoreMayCreditAPurchaseNoDeliveryBrought() throws {
        let target = #"{ webhookURL: "http://127.0.0.1:1/n", appStoreAPI: {} }"#
        var script = try Script(try scriptProfile(target: target))
        script.play(.grant, "1001", "coins", .consumable, at: 1)
        script.play(.grant, "1002", "coins", .consumable, at: 2, outcome: .notSent(reason: "refused"))
        #expect(failures(script.check(AccountState(balances: ["coins": 2]), at: 10)).isEmpty)
    }

    /// A backend that honours refunds and credits forgeries shows coins one above what the refunds leave: a credited
    /// forgery explains them, so they are an unlock without a verified purchase, not a refund not taken back.
    @Test func excessOverRefundsThatAForgeryExplainsIsAnUnlock() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "coins", .consumable, at: 1)
        script.play(.grant, "1002", "coins", .consumable, at: 2)
        script.play(.revoke, "1002", "coins", .consumable, at: 3)
        script.play(.grant, "9001", "coins", .consumable, at: 4, forgery: "bad-signature")
        let results = script.check(AccountState(balances: ["coins": 2]), at: 10)
        #expect(failures(results) == [.noUnlockWithoutVerifiedPurchase])
        let found = try #require(witness(results, .noUnlockWithoutVerifiedPurchase))
        #expect(found.summary.contains("only 1 remain once refunds are taken back"))
        // Beyond what the forgery can explain, the refund was not taken back.
        #expect(failures(script.check(AccountState(balances: ["coins": 3]), at: 11)).contains(.revocationHonored))
    }

    // MARK: - Item 3: a genuine purchase never accepted

    @Test func purchaseWhoseEveryAttemptWasRejectedIsLost() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1, outcome: .rejected(status: 500))
        // The device redelivers an unfinished transaction up to five times.
        for attempt in 0..<5 {
            script.playDeviceAttempt(
                attempt,
                "1001",
                "pro",
                .nonConsumable,
                at: 1 + Double(attempt),
                outcome: .rejected(status: 500)
            )
            if attempt < 4 { #expect(failures(script.check(AccountState(), at: 1.5 + Double(attempt))).isEmpty) }
        }
        let results = script.check(AccountState(), at: 30)
        let found = try #require(witness(results, .noLostPurchase))
        #expect(found.summary.contains("genuine delivery never accepted"))
        #expect(found.summary.contains("all 6 attempts"))
        #expect(found.entries.filter { $0.sentence.contains("was rejected with 500") }.count == 2)
        #expect(found.proof.contains("showed nothing granted for pro"))
        #expect(script.checker.verdict(unchecked: []).outcome == .fail)
    }

    /// A device endpoint that limits its rate answers 429, "retry later" by default: the device keeps the
    /// transaction and delivers it again (after the run, if need be), so a purchase whose device chain ended
    /// deferred is not lost, even beside a refused webhook. The same answers read as refusals are.
    @Test(arguments: [true, false])
    func purchaseWhoseDeviceWasToldToRetryLaterIsNotLost(deferred: Bool) throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1, outcome: .rejected(status: 500))
        let answer: DeliveryOutcome = deferred ? .deferred(status: 429) : .rejected(status: 429)
        for attempt in 0..<5 {
            script.playDeviceAttempt(attempt, "1001", "pro", .nonConsumable, at: 1 + Double(attempt), outcome: answer)
        }
        let results = script.check(AccountState(), at: 30)
        #expect(failures(results).contains(.noLostPurchase) == !deferred)
        // Neither owed nor lost: the report counts it as held.
        #expect(script.checker.heldAtEnd == (deferred ? 1 : 0))
    }

    /// A renewal's own deliveries come late (a late listener, a reordered webhook), and a `DID_CHANGE_RENEWAL_STATUS`
    /// signed after it carries its transaction first: a target that grants it from that notification grants what the
    /// App Store issued. An ID nothing carried still fails ("which the App Store never issued").
    @Test func transactionCarriedByANotificationBeforeItsGrantWasIssued() throws {
        var script = try Script(try scriptProfile())
        script.play(.none, "2639", "gold", .autoRenewable, at: 10, notification: "DID_CHANGE_RENEWAL_STATUS")
        let carried = AccountState(grants: [.init(transactionId: "2639", count: 1)])
        #expect(failures(script.check(carried, at: 10.5, final: false)).isEmpty)
        let invented = AccountState(grants: [.init(transactionId: "2640", count: 1)])
        #expect(failures(script.check(invented, at: 10.6, final: false)) == [.noUnlockWithoutVerifiedPurchase])
    }

    /// An Ask to Buy of a product reported pending, then declined; later a billing recovery into that product (a
    /// downgrade taking effect) carried by a `DID_CHANGE_RENEWAL_STATUS` before its own `DID_RENEW`. A product the App
    /// Store issued a transaction of is bought, so its entitlement is no unlock on a pending report.
    @Test func productFirstCarriedByANotificationAfterAPendingReportIsBought() throws {
        for carried in [true, false] {
            var script = try Script(try scriptProfile())
            script.play(.pending, "2000", "gold", .autoRenewable, at: 3, onDevice: true)
            if carried {
                script.play(
                    .subscriptionStatus,
                    "2639",
                    "gold",
                    .autoRenewable,
                    at: 10,
                    notification: "DID_CHANGE_RENEWAL_STATUS"
                )
            }
            let shown = AccountState(entitlements: [.init(productId: "gold", transactionId: "2639")])
            let failed = failures(script.check(shown, at: 10.5, final: false))
            #expect(failed == (carried ? [] : [.noUnlockWithoutVerifiedPurchase]), "carried: \(carried)")
        }
    }

    /// A PASS must not rest on purchases no check covered: when more of the genuine purchases are still held
    /// for delivery at the final probe than the share of unknown checks a verdict tolerates (20%), the verdict
    /// is unknown and says why; one held beside nine checked leaves it a pass.
    @Test(arguments: [(3, 2), (1, 9)])
    func purchasesHeldBeyondTheUnknownShareMakeTheVerdictUnknown(held: Int, checked: Int) throws {
        var script = try Script(try scriptProfile())
        script.buyCoins(checked, from: 1, first: 2001)
        for i in 0..<held {
            let id = String(3001 + i)
            let t = 2 + Double(i) * 6
            // The webhook never reached the target (a refused one would be a lost notification).
            script.play(.grant, id, "coins", .consumable, at: t, outcome: .notSent(reason: "connection refused"))
            for attempt in 0..<5 {
                script.playDeviceAttempt(
                    attempt,
                    id,
                    "coins",
                    .consumable,
                    at: t + Double(attempt),
                    outcome: .deferred(status: 429)
                )
            }
        }
        let results = script.check(AccountState(balances: ["coins": checked]), at: 60)
        #expect(failures(results).isEmpty, "\(results)")
        #expect(script.checker.heldAtEnd == held)
        let verdict = script.checker.verdict(unchecked: [])
        if held * 5 > held + checked {
            #expect(verdict.outcome == .unknown)
            #expect(
                verdict.reason?.contains("\(held) of \(held + checked) genuine purchases were still held") == true,
                "\(verdict.reason ?? "")"
            )
        } else {
            #expect(verdict.outcome == .pass, "\(verdict.reason ?? "")")
        }
    }

    /// The App Store keeps its own schedule: a webhook told "retry later" on its last attempt was refused.
    @Test func webhookToldToRetryLaterOnItsLastAttemptIsRefused() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1, outcome: .deferred(status: 429))
        let found = try #require(witness(script.check(AccountState(), at: 30), .noLostPurchase))
        #expect(found.summary.contains("genuine delivery never accepted"))
        #expect(found.entries.contains { $0.sentence.contains("was deferred with 429 (retry later)") })
    }

    /// Timeouts, unsent attempts (refused connections, restarts) and one accepted copy leave it not lost.
    @Test(arguments: [
        DeliveryOutcome.indeterminate(reason: "timeout"), .notSent(reason: "refused"), .acknowledged(status: 200),
    ])
    func rejectionBesideAnUndecidedOrAcceptedAttemptIsNotALoss(other: DeliveryOutcome) throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "coins", .consumable, at: 1, outcome: .rejected(status: 500))
        script.play(.grant, "1001", "coins", .consumable, at: 2, outcome: other, copy: .delayedDuplicate)
        let state = AccountState(balances: other.isAcknowledged ? ["coins": 1] : [:])
        #expect(!failures(script.check(state, at: 30)).contains(.noLostPurchase))
    }

    /// Without a device endpoint, device deliveries are never attempted: the rejected webhook decides.
    @Test func unattemptedDeviceDeliveryDoesNotHideARejectedPurchase() throws {
        let target = "{ embeddedLedger: false, webhookURL: \"http://127.0.0.1:1/n\" }"
        var script = try Script(try scriptProfile(target: target))
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1, outcome: .rejected(status: 500))
        let device = script.play(.grant, "1001", "pro", .nonConsumable, at: 1, outcome: nil, onDevice: true)
        script.checker.record(device, outcome: .notSent(reason: "no device endpoint"), at: 1)
        #expect(failures(script.check(AccountState(), at: 30)).contains(.noLostPurchase))
    }

    /// The App Store retries (by default, in any environment): a rejection is final only after the last retry,
    /// and retries count too.
    @Test func appleRetriesAreAttemptsToo() throws {
        var script = try Script(try scriptProfile(faults: "{}"))
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1, outcome: .rejected(status: 500))
        let pending = script.check(AccountState(), at: 2)
        #expect(failures(pending).isEmpty)
        #expect(pending.contains { if case .unknown = $0.outcome { $0.invariant == .noLostPurchase } else { false } })
        for attempt in 1...5 {
            script.play(
                .grant,
                "1001",
                "pro",
                .nonConsumable,
                at: 2 + Double(attempt),
                outcome: .rejected(status: 503),
                copy: .retry,
                attempt: attempt
            )
        }
        let found = try #require(witness(script.check(AccountState(), at: 30), .noLostPurchase))
        #expect(found.summary.contains("all 6 attempts"))
    }

    /// Issue 9 item 5: a webhook refused while the target is down is retried like any unacknowledged one,
    /// and a purchase rejected on every attempt is reported only once the policy's last retry was answered.
    @Test func purchaseRejectedOnEveryAttemptIsReportedOnlyAfterTheLastRetry() throws {
        var script = try Script(try scriptProfile(faults: "{}"))
        let policy = ChaosPolicy(profile: script.profile)
        var attempt = script.play(.grant, "1001", "pro", .nonConsumable, at: 1, outcome: nil)
        let outcomes =
            [DeliveryOutcome.notSent(reason: "refused: connection refused")]
            + Array(repeating: .rejected(status: 503), count: 5)
        for (index, outcome) in outcomes.enumerated() {
            let answered = attempt.at + 0.01
            script.checker.record(attempt, outcome: outcome, at: answered)
            let retries = policy.followUps(after: attempt, outcome: outcome, at: answered).filter { $0.copy == .retry }
            let results = script.check(AccountState(), at: answered + 0.01)
            guard index < outcomes.count - 1 else {
                #expect(retries.isEmpty)
                let found = try #require(witness(results, .noLostPurchase))
                #expect(found.summary.contains("genuine delivery never accepted"))
                #expect(found.summary.contains("all 5 attempts"))
                return
            }
            #expect(failures(results).isEmpty, "attempt \(index + 1)")
            if index > 0 {
                let lost = results.first { $0.invariant == .noLostPurchase }
                if case .unknown = lost?.outcome {
                } else {
                    Issue.record("attempt \(index + 1): \(String(describing: lost))")
                }
            }
            let retry = try #require(retries.first)
            script.checker.sent(retry, at: retry.at)
            attempt = retry
        }
        Issue.record("the policy stopped retrying before the last outcome")
    }

    /// Folding keeps memory bounded; a folded purchase rejected every time is still reported.
    @Test func rejectedPurchasesAreReportedAfterFolding() throws {
        var script = try Script(try scriptProfile(), foldAbove: 4)
        for i in 0..<12 {
            script.play(.grant, String(2000 + i), "coins", .consumable, at: Double(i), outcome: .rejected(status: 500))
        }
        let found = try #require(witness(script.check(AccountState(), at: 30), .noLostPurchase))
        #expect(found.summary.contains("never accepted"))
    }

    // MARK: - Item 4: nothing accepted never passes

    @Test func runThatAcknowledgedNothingDoesNotPass() throws {
        // With the App Store's retries on, so that the refused refund is still to be tried again.
        var script = try Script(try scriptProfile(faults: "{}"))
        // A refund the target rejected, a purchase that timed out: nothing is decided as lost...
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1, outcome: .indeterminate(reason: "timeout"))
        script.play(.revoke, "1001", "pro", .nonConsumable, at: 2, outcome: .rejected(status: 500))
        #expect(failures(script.check(AccountState(), at: 30)).isEmpty)
        // ...and yet invariants that "held" on an empty state prove nothing.
        let verdict = script.checker.verdict(unchecked: [])
        #expect(verdict.outcome == .unknown)
        let reason = try #require(verdict.reason)
        #expect(reason.contains("acknowledged none of the 2 genuine deliveries"))
        #expect(verdict.unknownSamples.first == reason)
    }

    @Test func playedRunWhoseEveryDeliveryWasRejectedFails() throws {
        let profile = try checkingProfile()
        let checker = Checker(profile: profile, startMillis: start)
        let policy = ChaosPolicy(profile: profile)
        // Every delivery, and every redelivery the policy asks for, is rejected.
        var work = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile))
        while let delivery = work.popLast() {
            checker.sent(delivery, at: delivery.at)
            guard delivery.sends else { continue }
            checker.record(delivery, outcome: .rejected(status: 500), at: delivery.at)
            work += policy.followUps(after: delivery, outcome: .rejected(status: 500), at: delivery.at)
        }
        let t = profile.durationSeconds + 7
        for token in checker.knownAccounts() {
            checker.check(account: token, state: AccountState(), at: t, final: true)
        }
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.outcome == .fail)
        // The purchases, and every notification (of any type) refused until the App Store gave up.
        #expect(
            verdict.violations.allSatisfy { $0.invariant == .noLostPurchase || $0.invariant == .noLostNotification }
        )
        #expect(verdict.tallies[.noLostPurchase]?.failed ?? 0 > 0)
        #expect(verdict.tallies[.noLostNotification]?.failed ?? 0 > 0)
    }

    // MARK: - Item 5: truthful, decisive witnesses

    @Test func doubleGrantWitnessShowsBothAcknowledgedCopies() throws {
        var script = try Script(try scriptProfile())
        let first = script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        let second = script.play(.grant, "1001", "pro", .nonConsumable, at: 1, copy: .concurrentDuplicate)
        // Later traffic about the transaction must not push the decisive entries out.
        for i in 0..<6 { script.play(.none, "1001", "pro", .nonConsumable, at: 2 + Double(i)) }
        let state = AccountState(
            entitlements: [.init(productId: "pro")],
            grants: [.init(transactionId: "1001", count: 2)]
        )
        let found = try #require(witness(script.check(state, at: 20, final: false), .noDoubleGrant))
        let acknowledged = found.entries.filter { $0.sentence.contains("was acknowledged") }.compactMap(\.delivery)
        #expect(acknowledged.contains(first.id) && acknowledged.contains(second.id))
        #expect(found.proof.contains("transaction 1001 granted 2 times"))
    }

    /// The double-grant witness of a webhook-only run whose device copy of a purchase had nowhere to go, and
    /// that copy.
    private func webhookOnlyWitness() throws -> (witness: Witness, device: PlannedDelivery) {
        let target = "{ embeddedLedger: false, webhookURL: \"http://127.0.0.1:1/n\" }"
        var script = try Script(try scriptProfile(target: target))
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1, outcome: nil)
        let device = script.play(.grant, "1001", "pro", .nonConsumable, at: 1, outcome: nil, onDevice: true)
        script.checker.record(device, outcome: .notSent(reason: "no device endpoint"), at: 1)
        let state = AccountState(
            entitlements: [.init(productId: "pro")],
            grants: [.init(transactionId: "1001", count: 2)]
        )
        return (try #require(witness(script.check(state, at: 5, final: false), .noDoubleGrant)), device)
    }

    @Test func dispatchIsNotCalledSent() throws {
        let found = try webhookOnlyWitness().witness
        #expect(!found.entries.contains { $0.sentence.contains("was sent") })
        #expect(found.entries.contains { $0.sentence.contains("was dispatched") })
        #expect(found.entries.contains { $0.sentence.contains("was not sent (no device endpoint)") })
    }

    @Test func aWebhookOnlyRunsWitnessDoesNotSayADeviceDeliveryWasDispatched() throws {
        let (found, device) = try webhookOnlyWitness()
        let devices = found.entries.filter { $0.delivery == device.id }.map(\.sentence)
        #expect(!devices.isEmpty && devices.allSatisfy { !$0.contains("was dispatched") }, "\(devices)")
        #expect(devices.contains { $0.contains("no device endpoint") }, "\(devices)")
    }

    @Test func theNoDeviceEndpointNoteNamesTheSectionAsWellAsTheShorthand() throws {
        let target = """
            { embeddedLedger: false, webhook: { url: "http://127.0.0.1:1/n" },
              probe: { kind: "http", url: "http://127.0.0.1:1/p/{appAccountToken}" } }
            """
        let profile = try scriptProfile(target: target)
        let reasons = Checker.unchecked(target: profile.target, probeReturnsGrants: true).map(\.reason)
        let note = reasons.first { $0.contains("no device endpoint") } ?? ""
        #expect(note.contains("target.deviceDelivery") && note.contains("target.deviceURL"), "\(reasons)")
    }

    @Test func staleRegressionWitnessCitesTheStaleDelivery() throws {
        let profile = try checkingProfile()
        let (checker, _, planned) = play(profile)
        let grants = planned.filter { $0.action.truth.productType == .autoRenewable && $0.action.truth.kind == .grant }
        let first = try #require(grants.first)
        let last = try #require(
            grants.last { $0.action.truth.originalTransactionId == first.action.truth.originalTransactionId }
        )
        let token = first.action.appAccountToken
        let product = try #require(first.action.truth.productId)
        // Probed after every answer: only what the target acknowledged by the time a probe asked counts.
        let end = (planned.map(\.at).max() ?? 0) + 60
        let newer = AccountState(entitlements: [.init(productId: product, expiresDate: last.action.truth.expiresDate)])
        checker.check(account: token, state: newer, at: end, final: false)
        let older = AccountState(entitlements: [.init(productId: product, expiresDate: first.action.truth.expiresDate)])
        let found = try #require(
            witness(checker.check(account: token, state: older, at: end + 1, final: false), .noStaleRegression)
        )
        #expect(found.entries.contains { $0.transactionId == first.action.truth.transactionId })
        #expect(found.entries.contains { $0.transactionId == last.action.truth.transactionId })
    }

    // MARK: - Item 6: the probe line says what proves the violation

    @Test func unlockWitnessNamesTheGrantThatShouldNotBeThere() throws {
        var script = try Script(try scriptProfile())
        script.play(.grant, "1001", "pro", .nonConsumable, at: 1)
        let state = AccountState(
            entitlements: [.init(productId: "pro", transactionId: "1001")],
            grants: [.init(transactionId: "1001", count: 1), .init(transactionId: "4242", count: 1)]
        )
        let found = try #require(witness(script.check(state, at: 5, final: false), .noUnlockWithoutVerifiedPurchase))
        #expect(found.proof == "the probe at t=5.000s showed transaction 4242 granted 1 time")
        #expect(found.prose.contains(found.proof))
    }
}
