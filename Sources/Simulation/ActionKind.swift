import Primitives
internal import Profile

/// What an arrival asks the world to do, one case per ``ActionMix`` weight.
///
/// The world draws a kind with the mix's weights in the order of ``allCases`` (the order `ActionMix` declares its
/// fields, which the seeded streams depend on), so the weight and the action of a kind are one case, never two
/// lists that must agree by position.
enum ActionKind: CaseIterable, Sendable, Hashable {
    case consumable, nonConsumable, subscribe, nonRenewing
    case cancel, resume, upgrade, downgrade
    case refund, refundReversal, billingFailure, offerRedemption, priceIncrease, deviceReport, renewalExtension

    /// The purchases, drawn again with their own weights when the first draw cannot apply to the account.
    static let purchases: [ActionKind] = [.consumable, .nonConsumable, .subscribe, .nonRenewing]

    /// The product type a purchase buys; nil for the other kinds.
    var productKind: ProductKind? {
        switch self {
        case .consumable: .consumable
        case .nonConsumable: .nonConsumable
        case .subscribe: .autoRenewable
        case .nonRenewing: .nonRenewing
        default: nil
        }
    }

    /// The kind's weight in a mix.
    func weight(in mix: ActionMix) -> Double {
        switch self {
        case .consumable: mix.consumable
        case .nonConsumable: mix.nonConsumable
        case .subscribe: mix.subscribe
        case .nonRenewing: mix.nonRenewing
        case .cancel: mix.cancel
        case .resume: mix.resume
        case .upgrade: mix.upgrade
        case .downgrade: mix.downgrade
        case .refund: mix.refund
        case .refundReversal: mix.refundReversal
        case .billingFailure: mix.billingFailure
        case .offerRedemption: mix.offerRedemption
        case .priceIncrease: mix.priceIncrease
        case .deviceReport: mix.deviceReport
        case .renewalExtension: mix.renewalExtension
        }
    }

    /// Draws a kind among `kinds` with the mix's weights (at least one must be positive).
    static func draw(from kinds: [ActionKind], mix: ActionMix, using rng: inout SplitMix64) -> ActionKind {
        kinds[rng.weighted(kinds.map { $0.weight(in: mix) })]
    }
}
