import AppStoreModel
import Profile
import Simulation
import Testing

/// `population.withoutAccountTokenFraction`: the share of purchases whose payloads carry no `appAccountToken`.
struct AccountTokenShareTests {
    static let start: Int64 = 1_800_000_000_000

    static func actions(share: Double?) throws -> [Action] {
        var profile = try richProfile(accounts: 30, seconds: 60)
        if let share { profile.population.withoutAccountTokenFraction = share }
        return Array(World(profile: profile, startMillis: start))
    }

    /// The tokens the Apple payloads of an action carry (a transaction's, a renewal info's), nil where absent.
    static func payloadTokens(_ action: Action) -> [String?] {
        switch action.delivery {
        case .notification(let note):
            (note.transaction.map { [$0.payload.appAccountToken] } ?? [])
                + (note.renewal.map { [$0.appAccountToken] } ?? [])
        case .device(let device): [device.transaction.payload.appAccountToken]
        case .report, .marker: []
        }
    }

    /// The action with every payload token taken out, to compare the rest of two worlds.
    static func withoutPayloadTokens(_ action: Action) -> Action {
        var action = action
        switch action.delivery {
        case .notification(var note):
            note.transaction?.payload.appAccountToken = nil
            note.renewal?.appAccountToken = nil
            action.delivery = .notification(note)
        case .device(var device):
            device.transaction.payload.appAccountToken = nil
            action.delivery = .device(device)
        case .report, .marker:
            break
        }
        return action
    }

    @Test func aShareOfZeroGeneratesTheWorldOfAProfileWithoutTheSetting() throws {
        #expect(try Self.actions(share: 0) == Self.actions(share: nil))
    }

    @Test func aShareOfOneMintsNoTokenButEveryActionStillNamesItsAccount() throws {
        let actions = try Self.actions(share: 1)
        let tokens = actions.flatMap(Self.payloadTokens)
        #expect(tokens.count > 100)
        #expect(tokens.allSatisfy { $0 == nil })
        let world = World(profile: try richProfile(accounts: 30, seconds: 60), startMillis: Self.start)
        for action in actions {
            #expect(world.account(of: action.appAccountToken) == action.account)
            if case .report(let report) = action.delivery { #expect(report.appAccountToken == action.appAccountToken) }
        }
    }

    /// The share decides which payloads carry a token and nothing else: the rest of the world is the same, and
    /// every signing of one purchase (its renewals, refunds, notifications) agrees.
    @Test func aShareChangesOnlyTheTokensAndKeepsEachPurchaseConsistent() throws {
        let plain = try Self.actions(share: 0)
        let mixed = try Self.actions(share: 0.5)
        #expect(mixed.map(Self.withoutPayloadTokens) == plain.map(Self.withoutPayloadTokens))
        var carries: [String: Bool] = [:]
        for action in mixed {
            guard let original = action.transaction?.originalTransactionId else { continue }
            let token = action.transaction?.payload.appAccountToken
            if let token { #expect(token == action.appAccountToken) }
            if let earlier = carries[original] { #expect(earlier == (token != nil), "purchase \(original)") }
            carries[original] = token != nil
        }
        let without = carries.values.filter { !$0 }.count
        #expect(carries.count > 50)
        #expect(without > carries.count / 4 && without < carries.count * 3 / 4, "\(without) of \(carries.count)")
    }
}
