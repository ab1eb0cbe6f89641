import Chaos
import Checking
import Foundation
import Profile
import Simulation
import Testing

/// Probe answers as backends give them: bulk lines in any case, accounts missing from them, and the contract's
/// optional per-transaction state.
struct ProbeTests {
    /// Bulk output for `tokens`, one JSON line each, with the token as `spell` writes it.
    private func bulkLines(
        _ ideal: IdealTarget,
        tokens: [String],
        at t: Double,
        spell: (String) -> String
    ) throws -> [UInt8] {
        var text = ""
        for token in tokens {
            var object =
                try JSONSerialization.jsonObject(with: try JSONEncoder().encode(ideal.state(token, at: t)))
                as! [String: Any]
            object["appAccountToken"] = spell(token)
            text += String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self) + "\n"
        }
        return Array(text.utf8)
    }

    /// The bug that gave 73 false "lost purchase" violations: a backend storing lowercase UUIDs.
    @Test func lowercaseBulkTokensRaiseNoViolation() throws {
        let profile = try checkingProfile()
        let (checker, ideal, _) = play(profile)
        let t = profile.durationSeconds + 7
        let tokens = checker.knownAccounts()
        #expect(tokens.contains { $0 != $0.lowercased() }, "the test needs tokens minted in uppercase")
        let answer = try JSONLines.parse(try bulkLines(ideal, tokens: tokens, at: t) { $0.lowercased() })
        #expect(answer.count == tokens.count)
        for token in tokens {
            let results = checker.check(account: token, state: try answer.state(of: token), at: t, final: true)
            #expect(failures(results).isEmpty, "\(token): \(results)")
        }
        #expect(checker.verdict(unchecked: []).outcome == .pass)
    }

    @Test func accountMissingFromBulkOutputIsUnknownNotEmpty() throws {
        let profile = try checkingProfile()
        let (checker, ideal, _) = play(profile)
        let t = profile.durationSeconds + 7
        let tokens = checker.knownAccounts()
        let printed = Array(tokens.dropFirst())
        let answer = try JSONLines.parse(try bulkLines(ideal, tokens: printed, at: t) { $0 })
        #expect(throws: ProbeError.missingAccount(tokens[0])) { try answer.state(of: tokens[0]) }
        #expect(answer[tokens[0]] == nil)
        #expect(answer[printed[0].lowercased()] != nil)
    }

    @Test func decodesPerTransactionState() throws {
        let json = """
            {"entitlements": [], "transactions": [
              {"transactionId": "7", "productId": "gold", "state": "revoked", "revokedAt": 5,
               "periodStart": 1, "periodEnd": 9},
              {"transactionId": "8", "productId": "pro", "state": "granted"}]}
            """
        let state = try AccountState.decode(contractJSON: Array(json.utf8))
        #expect(
            state.transactions == [
                .init(
                    transactionId: "7",
                    productId: "gold",
                    state: .revoked,
                    revokedAt: 5,
                    periodStart: 1,
                    periodEnd: 9
                ),
                .init(transactionId: "8", productId: "pro", state: .granted),
            ]
        )
        #expect(try AccountState.decode(contractJSON: Array("{}".utf8)).transactions == nil)
        let unknownState = #"{"transactions": [{"transactionId": "7", "productId": "gold", "state": "gone"}]}"#
        #expect(throws: ProbeError.self) { try AccountState.decode(contractJSON: Array(unknownState.utf8)) }
    }

    @Test func decodesRefundCounts() throws {
        let json = #"{"refunds": [{"transactionId": "7", "count": 2}, {"transactionId": "8", "count": 1}]}"#
        let state = try AccountState.decode(contractJSON: Array(json.utf8))
        #expect(state.refunds == [.init(transactionId: "7", count: 2), .init(transactionId: "8", count: 1)])
        #expect(try AccountState.decode(contractJSON: Array("{}".utf8)).refunds == nil)
    }

    /// Every account's final state from the ideal target, with its per-transaction books (refunded ones
    /// revoked, each subscription period as signed) and its refunds (each applied once).
    private func withTransactions(_ ideal: IdealTarget, _ token: String, at t: Double) -> AccountState {
        var state = ideal.state(token, at: t)
        let account = ideal.accounts[token] ?? IdealTarget.Account()
        state.transactions = account.granted.sorted { $0.key < $1.key }.map { id, truth in
            AccountState.TransactionState(
                transactionId: id,
                productId: truth.productId ?? "",
                state: account.revoked.contains(id) ? .revoked : .granted,
                periodEnd: truth.productType == .autoRenewable ? truth.expiresDate : nil
            )
        }
        state.refunds = account.revoked.sorted().map { .init(transactionId: $0, count: 1) }
        return state
    }

    @Test func correctPerTransactionBooksPass() throws {
        let profile = try checkingProfile()
        let (checker, ideal, _) = play(profile)
        let t = profile.durationSeconds + 7
        for token in checker.knownAccounts() {
            let results = checker.check(
                account: token,
                state: withTransactions(ideal, token, at: t),
                at: t,
                final: true
            )
            #expect(failures(results).isEmpty, "\(token): \(results)")
        }
    }

    @Test func refundedTransactionListedAsGrantedBreaksRevocation() throws {
        let profile = try checkingProfile()
        let (checker, ideal, _) = play(profile)
        let t = profile.durationSeconds + 7
        let refunded = ideal.accounts.sorted { $0.key < $1.key }.compactMap { token, account in
            account.revoked.sorted().first { account.granted[$0] != nil }.map { (token, $0) }
        }
        let (token, id) = try #require(refunded.first)
        var state = withTransactions(ideal, token, at: t)
        for index in state.transactions!.indices where state.transactions![index].transactionId == id {
            state.transactions![index].state = .granted
        }
        let results = checker.check(account: token, state: state, at: t, final: true)
        #expect(failures(results) == [.revocationHonored], "\(results)")
    }

    /// A refund that cancels the previous period and stretches it: the period the target books differs from
    /// the one Apple signed.
    @Test func stretchedPeriodBreaksSubscriptionState() throws {
        let profile = try checkingProfile()
        let (checker, ideal, planned) = play(profile)
        let superseded = Set(planned.compactMap(\.action.truth.supersedes))
        let t = profile.durationSeconds + 7
        // The current period of a subscription (older periods may be folded into counts by the checker).
        let candidates = ideal.accounts.sorted { $0.key < $1.key }.compactMap { token, account in
            account.subs.values.compactMap(\.transactionId).sorted().first { id in
                account.granted[id] != nil && !account.revoked.contains(id) && !superseded.contains(id)
            }.map { (token, $0) }
        }
        let (token, id) = try #require(candidates.first)
        var state = withTransactions(ideal, token, at: t)
        for index in state.transactions!.indices where state.transactions![index].transactionId == id {
            state.transactions![index].periodEnd! += 30_000
        }
        let results = checker.check(account: token, state: state, at: t, final: true)
        #expect(failures(results) == [.subscriptionState], "\(results)")
    }

    @Test func unknownVerdictSaysHowManyFinalProbesFailed() throws {
        let profile = try checkingProfile()
        let (checker, ideal, _) = play(profile)
        let t = profile.durationSeconds + 7
        let tokens = checker.knownAccounts()
        for (index, token) in tokens.enumerated() {
            if index % 2 == 0 {
                checker.probeFailed(account: token, error: ProbeError.missingAccount(token), at: t, final: true)
            } else {
                checker.check(account: token, state: ideal.state(token, at: t), at: t, final: true)
            }
        }
        let verdict = checker.verdict(unchecked: [])
        #expect(verdict.outcome == .unknown)
        let failed = (tokens.count + 1) / 2
        let reason = try #require(verdict.reason)
        #expect(
            reason.hasPrefix(
                "\(failed) of \(tokens.count) final probes failed: bulk probe printed no line for account \(tokens[0]);"
            ),
            "\(reason)"
        )
    }
}
