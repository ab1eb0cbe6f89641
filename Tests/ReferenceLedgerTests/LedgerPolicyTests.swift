import AppStoreModel
import Testing

@testable import ReferenceLedger

/// The ledger's decisions as rules: the correct policy keeps the documented ones, and each flaw is a deviation
/// from exactly the rule it names.
struct LedgerPolicyTests {
    private static let refunded = Revocation(date: 1_000, signed: 2_000, reversalSigned: nil)

    // A flaw that built the correct policy would be a flaw the ledger does not have: its detection row could
    // never fail.
    @Test(arguments: LedgerFlaw.allCases)
    func everyFlawDeviatesFromTheCorrectPolicy(_ flaw: LedgerFlaw) {
        #expect(LedgerPolicy(flaws: [flaw]) != .correct)
    }

    @Test func grantsOncePerTransactionWhicheverPathDelivers() {
        let policy = LedgerPolicy.correct
        #expect(policy.grantKey(transactionId: "t1", source: .webhook, resurrected: false) == "t1")
        #expect(policy.grantKey(transactionId: "t1", source: .device, resurrected: false) == "t1")
        #expect(policy.dropsReplayedNotifications)
    }

    @Test func dedupesPerPathOrNotAtAllWithTheDoubleGrantFlaws() {
        let perPath = LedgerPolicy(flaws: [.dualPathDoubleGrant])
        #expect(
            perPath.grantKey(transactionId: "t1", source: .webhook, resurrected: false)
                != perPath.grantKey(transactionId: "t1", source: .device, resurrected: false)
        )
        let none = LedgerPolicy(flaws: [.doubleGrant])
        #expect(!none.dropsReplayedNotifications)
        #expect(
            none.grantKey(transactionId: "t1", source: .webhook, resurrected: false)
                != none.grantKey(transactionId: "t1", source: .webhook, resurrected: false)
        )
    }

    @Test(arguments: ["pending", "success", "userCancelled"])
    func neverGrantsOnADeviceReport(_ result: String) {
        let report = ReceivedDeviceReport(
            purchaseResult: result,
            productId: "p",
            appAccountToken: "a",
            transactionId: "t"
        )
        #expect(LedgerPolicy.correct.reportGrant(report) == nil)
    }

    @Test func grantsReportsOnlyWithTheReportFlaws() {
        let pending = ReceivedDeviceReport(purchaseResult: "pending", productId: "p", appAccountToken: "a")
        let claim = ReceivedDeviceReport(
            purchaseResult: "success",
            productId: "p",
            appAccountToken: "a",
            transactionId: "t"
        )
        #expect(LedgerPolicy(flaws: [.unlockOnPending]).reportGrant(pending) != nil)
        #expect(LedgerPolicy(flaws: [.unlockOnPending]).reportGrant(claim) == nil)
        #expect(LedgerPolicy(flaws: [.trustClientClaims]).reportGrant(claim) == "t")
        #expect(LedgerPolicy(flaws: [.trustClientClaims]).reportGrant(pending) == nil)
    }

    @Test func keepsARefundWhenAPurchaseIsReplayed() {
        let (next, resurrected) = LedgerPolicy.correct.revocation(
            Self.refunded,
            after: nil,
            isReversal: false,
            signedDate: 3_000
        )
        #expect(next == Self.refunded)
        #expect(!resurrected)
        let (flawed, back) = LedgerPolicy(flaws: [.resurrectAfterRefund]).revocation(
            Self.refunded,
            after: nil,
            isReversal: false,
            signedDate: 3_000
        )
        #expect(flawed.date == nil && back)
    }

    // (reversal signed at, refund signed at after it, still revoked)
    @Test(arguments: [(3_000, 4_000, true), (3_000, 2_500, false), (1_500, nil, true)] as [(Int64, Int64?, Bool)])
    func ordersRefundsAndReversalsBySignedDate(reversal: Int64, refundAgain: Int64?, revoked: Bool) {
        let policy = LedgerPolicy.correct
        var state = policy.revocation(Self.refunded, after: nil, isReversal: true, signedDate: reversal).0
        if let refundAgain {
            state = policy.revocation(state, after: refundAgain, isReversal: false, signedDate: refundAgain).0
        }
        #expect((state.date != nil) == revoked)
    }

    @Test func keepsTheNewerViewUnlessLastWriteWins() {
        #expect(LedgerPolicy.correct.replaces(incoming: 2, stored: 1))
        #expect(!LedgerPolicy.correct.replaces(incoming: 1, stored: 2))
        #expect(!LedgerPolicy.correct.replaces(incoming: 2, stored: 2))
        #expect(LedgerPolicy(flaws: [.staleOverwrite]).replaces(incoming: 1, stored: 2))
    }

    @Test func aNewerNoticeAboutAnOlderPeriodKeepsTheCurrentPeriod() {
        let policy = LedgerPolicy.correct
        #expect(!policy.movesCurrentPeriod(purchase: 10, expires: 20, storedPurchase: 20, storedExpires: 30))
        #expect(policy.movesCurrentPeriod(purchase: 30, expires: 25, storedPurchase: 20, storedExpires: 30))
        #expect(policy.movesCurrentPeriod(purchase: 20, expires: 40, storedPurchase: 20, storedExpires: 30))
    }

    @Test func revokesASubscriptionOnARefundWithoutStatusUnlessRefundsAreIgnored() {
        let revoked = Status.revoked
        let active = Status.active
        #expect(LedgerPolicy.correct.subscriptionStatus(derived: active, revokingWithoutStatus: true) == revoked)
        #expect(LedgerPolicy.correct.revocation(carried: 5) == 5)
        let ignoring = LedgerPolicy(flaws: [.ignoreRefund])
        #expect(ignoring.subscriptionStatus(derived: active, revokingWithoutStatus: true) == active)
        #expect(ignoring.subscriptionStatus(derived: revoked, revokingWithoutStatus: false) == nil)
        #expect(ignoring.revocation(carried: 5) == nil)
        #expect(!ignoring.revocationOverridesStatus)
    }
}
