import Chaos
import Checking
import Foundation
import Profile
import RunControl
import Signing
import Testing

@testable import PayStorm
@testable import TargetCheck

/// `paystorm target check`'s table from what was sent and what the probe read, without a target: the note
/// for a target without a probe, and the row of a purchase the probe could not read.
struct TargetCheckJudgingTests {
    static func plan() throws -> TargetCheck.Plan {
        try TargetCheck.Plan(profile: DeliveryRequestsTests.profile(target: #"{ webhookURL: "http://127.0.0.1:1/n" }"#))
    }

    static func target(probe: String?) throws -> PreparedTarget {
        let endpoints = Endpoints(
            webhook: try .contractV1(.webhook, url: "http://127.0.0.1:1/n"),
            deviceDelivery: nil,
            deviceReport: nil,
            probe: probe,
            headers: [],
            probeMapping: nil
        )
        return PreparedTarget(endpoints: endpoints, pki: try TestPKI.generate(), ledger: nil, description: "test")
    }

    /// Every step of the plan sent and acknowledged.
    static func acknowledged(_ plan: TargetCheck.Plan) -> TargetCheck.Sent {
        var sent = TargetCheck.Sent()
        for step in plan.steps {
            sent.steps.append((step, sent.rows.count, .acknowledged(status: 200)))
            sent.rows.append(
                TargetCheckRow(
                    role: step.role,
                    sends: step.sends,
                    request: "-",
                    status: "200",
                    classified: "-",
                    probe: "-"
                )
            )
        }
        return sent
    }

    @Test func aTargetWithoutAProbePassesWithANoteThatNothingWasProbed() throws {
        let plan = try Self.plan()
        let outcome = TargetCheck.judge(
            Self.acknowledged(plan),
            TargetCheck.Probed(hasProbe: false),
            plan: plan,
            target: try Self.target(probe: nil)
        )
        #expect(outcome.notes == ["no probe (target.probe): what the target granted was not checked"])
        #expect(outcome.rows.allSatisfy { $0.probe == "-" && $0.hint == nil })
        #expect(outcome.passed)
        #expect(outcome.target == "test")
        #expect(outcome.setup.hasPrefix("product n (nonConsumable)\naccounts: purchase \(plan.accounts.buyers[0]), "))
    }

    @Test func aPurchaseTheProbeCouldNotReadNamesTheProbeURLAndWhy() throws {
        let plan = try Self.plan()
        let buyer = plan.accounts.buyers[0]
        var probed = TargetCheck.Probed(hasProbe: true)
        probed.states[plan.accounts.forgery] = AccountState()
        probed.states[plan.accounts.pending] = AccountState(entitlements: [
            .init(productId: "n"), .init(productId: "x"),
        ])
        probed.unknowns = ["account \(buyer): timed out"]
        probed.notes = ["1 of 3 final probes failed (their checks are unknown): timed out"]
        let outcome = TargetCheck.judge(
            Self.acknowledged(plan),
            probed,
            plan: plan,
            target: try Self.target(probe: "http://127.0.0.1:1/accounts/{appAccountToken}")
        )
        let genuine = try #require(outcome.rows.first { $0.sends.hasPrefix("genuine purchase") })
        #expect(genuine.probe == "probe failed")
        #expect(
            genuine.hint
                == "the probe failed (GET http://127.0.0.1:1/accounts/\(buyer): account \(buyer): timed out): "
                + "check the probe URL or mapping"
        )
        #expect(outcome.rows.first { $0.sends == "forgery (bad-signature)" }?.probe == "nothing")
        #expect(outcome.rows.first { $0.sends == "pending report" }?.probe == "n entitled; also x")
        #expect(outcome.notes == probed.notes)
        #expect(!outcome.passed)
    }

    /// A catalog of every product type, each bought by the check.
    static func everyType() throws -> TargetCheck.Plan {
        let text = ProfileText.minimal.replacingOccurrences(
            of: "TARGET",
            with: #"{ webhookURL: "http://127.0.0.1:1/n" }"#
        )
        .replacingOccurrences(
            of: #"products: [{ id: "n", type: "nonConsumable", priceMilli: 990 }]"#,
            with: #"products: [{ id: "coins", type: "consumable", priceMilli: 990 }, "#
                + #"{ id: "n", type: "nonConsumable", priceMilli: 990 }, "#
                + #"{ id: "pass", type: "nonRenewing", priceMilli: 990, periodSeconds: 60 }, "#
                + #"{ id: "monthly", type: "autoRenewable", priceMilli: 990, group: "g", periodSeconds: 60 }, "#
                + #"{ id: "coins2", type: "consumable", priceMilli: 990 }], groups: [{ id: "g" }]"#
        )
        return try TargetCheck.Plan(profile: try Profile.decode(Data(text.utf8), file: "t.json5"))
    }

    @Test func theCheckBuysOneProductOfEachTypeAndProvisionsOnlyItsAccounts() throws {
        let plan = try Self.everyType()
        #expect(plan.products.map(\.id) == ["coins", "n", "pass", "monthly"])
        let bought = plan.steps.filter { $0.kind == .genuine }.map(\.product)
        #expect(Set(bought) == ["coins", "n", "pass", "monthly"])
        #expect(plan.product.id == "n")
        #expect(plan.profile.population.accounts == 6)
        #expect(!plan.accounts.buyers.contains(plan.accounts.forgery))
        #expect(!plan.accounts.buyers.contains(plan.accounts.pending))
        #expect(plan.accounts.forgery != plan.accounts.pending)
    }

    @Test func aProbeThatCannotSeeSubscriptionsFailsTheCheck() throws {
        let plan = try Self.everyType()
        var probed = TargetCheck.Probed(hasProbe: true)
        // The probe shows every one-time purchase and no subscription.
        for buyer in plan.accounts.buyers {
            probed.states[buyer] = AccountState(
                entitlements: [.init(productId: "n"), .init(productId: "pass")],
                balances: ["coins": 1]
            )
        }
        let outcome = TargetCheck.judge(
            Self.acknowledged(plan),
            probed,
            plan: plan,
            target: try Self.target(probe: "http://127.0.0.1:1/accounts/{appAccountToken}")
        )
        let subscription = try #require(outcome.rows.first { $0.sends == "genuine purchase of monthly" })
        #expect(
            subscription.hint
                == "probe shows nothing of monthly after an acknowledged purchase: check that the probe (or its "
                + "mapping) reports autoRenewable purchases"
        )
        #expect(!outcome.passed)
        #expect(outcome.setup.hasPrefix("products coins (consumable), n (nonConsumable), pass (nonRenewing), "))
    }

    /// A profile whose accounts are provisioned by `script` (through `sh -c`) and refreshed every 600 s.
    private static func refreshing(_ script: String) throws -> Profile {
        try DeliveryRequestsTests.profile(
            target: #"{ webhookURL: "http://127.0.0.1:1/n", accounts: { provision: ["/bin/sh", "-c", "\#(script)"], "#
                + "refreshSeconds: 600 } }"
        )
    }

    @Test func aProfileThatRefreshesItsAccountsHasTheCommandRunAgain() throws {
        let directory = AccountDirectory()
        let ran = try #require(
            TargetCheck.refreshAccounts(
                profile: try Self.refreshing("read -r line; echo $line; cat >/dev/null"),
                directory: directory,
                interruption: Interruption()
            )
        )
        #expect(!ran.failed)
        #expect(ran.note.hasPrefix("the provisioning command ran again in "))
        #expect(
            ran.note.hasSuffix(
                " s, as a run will every 600 s (target.accounts.refreshSeconds); the probe read with its fields"
            )
        )
        let refused = try #require(
            TargetCheck.refreshAccounts(
                profile: try Self.refreshing("cat >/dev/null; echo user exists >&2; exit 1"),
                directory: directory,
                interruption: Interruption()
            )
        )
        #expect(refused.failed)
        #expect(refused.note.hasPrefix("the provisioning command failed when run again, as a run will every 600 s"))
        #expect(refused.note.contains("exited 1 (stderr: \"user exists\")"), "\(refused.note)")
        let noRefresh = try DeliveryRequestsTests.profile(target: #"{ webhookURL: "http://127.0.0.1:1/n" }"#)
        #expect(
            TargetCheck.refreshAccounts(profile: noRefresh, directory: directory, interruption: Interruption()) == nil
        )
    }

    @Test func aCheckThatFailedOnANoteSaysToReadTheNotes() {
        let outcome = TargetCheckOutcome(
            rows: [],
            target: "t",
            setup: "s",
            notes: ["the command failed"],
            passed: false
        )
        #expect(outcome.text.hasSuffix("note: the command failed\n\nresult: FAIL (see the notes)\n"))
    }
}
