/// How many accounts and devices the world has.
public struct Population: Sendable, Hashable, Decodable {
    /// Number of accounts, each with its own `appAccountToken`.
    public var accounts: Int
    /// Devices per account (each has its own listener and unfinished queue).
    public var devicesPerAccount: Int
    /// Fraction of accounts that belong to a Family Sharing group with one other account.
    public var familySharingFraction: Double
    /// Fraction of purchases the app makes without an `appAccountToken` (many apps never set one): their
    /// transactions, renewals and renewal info carry none, and only the device that bought one (or the
    /// backend's own record of its original transaction) says whose it is.
    public var withoutAccountTokenFraction: Double

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(
            decoder,
            allowed: ["accounts", "devicesPerAccount", "familySharingFraction", "withoutAccountTokenFraction"]
        )
        accounts = Int(try f.integer("accounts", in: 1...100_000_000, default: nil))
        devicesPerAccount = Int(try f.integer("devicesPerAccount", in: 1...16, default: 1))
        familySharingFraction = try f.number("familySharingFraction", in: 0...1, default: 0)
        withoutAccountTokenFraction = try f.number("withoutAccountTokenFraction", in: 0...1, default: 0)
    }

    /// Creates a population.
    public init(
        accounts: Int,
        devicesPerAccount: Int = 1,
        familySharingFraction: Double = 0,
        withoutAccountTokenFraction: Double = 0
    ) {
        self.accounts = accounts
        self.devicesPerAccount = devicesPerAccount
        self.familySharingFraction = familySharingFraction
        self.withoutAccountTokenFraction = withoutAccountTokenFraction
    }
}

/// Relative weights of the actions the schedule starts. Zero disables an action.
public struct ActionMix: Sendable, Hashable, Decodable {
    /// Buy a consumable (quantity 1–3).
    public var consumable: Double = 3
    /// Buy a non-consumable.
    public var nonConsumable: Double = 2
    /// Subscribe to an auto-renewable subscription (initial buy or resubscribe).
    public var subscribe: Double = 3
    /// Buy a non-renewing subscription.
    public var nonRenewing: Double = 1
    /// Turn auto-renew off (the subscription then expires voluntarily).
    public var cancel: Double = 1
    /// Turn auto-renew back on.
    public var resume: Double = 0.5
    /// Upgrade within a group (immediate).
    public var upgrade: Double = 0.5
    /// Downgrade within a group (at next renewal).
    public var downgrade: Double = 0.5
    /// Refund one earlier purchase.
    public var refund: Double = 0.5
    /// Reverse an earlier refund.
    public var refundReversal: Double = 0.1
    /// Make the next renewal fail (billing retry, grace period).
    public var billingFailure: Double = 0.5
    /// Redeem a promotional offer on an active subscription.
    public var offerRedemption: Double = 0.2
    /// Announce a price increase for an active subscription.
    public var priceIncrease: Double = 0.2
    /// A device reports a purchase outcome (pending or cancelled) that must not grant.
    public var deviceReport: Double = 0.3
    /// Apple extends an active subscription's renewal date (`RENEWAL_EXTENDED`; one in ten fails,
    /// `RENEWAL_EXTENSION`/`FAILURE`).
    public var renewalExtension: Double = 0.1

    static let keys = [
        "consumable", "nonConsumable", "subscribe", "nonRenewing", "cancel", "resume", "upgrade", "downgrade",
        "refund", "refundReversal", "billingFailure", "offerRedemption", "priceIncrease", "deviceReport",
        "renewalExtension",
    ]

    /// The default mix.
    public init() {}

    /// Strict decoding: keys absent from the object weigh 0.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: Self.keys)
        func w(_ key: String) throws -> Double { try f.number(key, in: 0...1_000_000, default: 0) }
        consumable = try w("consumable")
        nonConsumable = try w("nonConsumable")
        subscribe = try w("subscribe")
        nonRenewing = try w("nonRenewing")
        cancel = try w("cancel")
        resume = try w("resume")
        upgrade = try w("upgrade")
        downgrade = try w("downgrade")
        refund = try w("refund")
        refundReversal = try w("refundReversal")
        billingFailure = try w("billingFailure")
        offerRedemption = try w("offerRedemption")
        priceIncrease = try w("priceIncrease")
        deviceReport = try w("deviceReport")
        renewalExtension = try w("renewalExtension")
    }

    /// The sum of the weights (a profile whose sum is 0 starts nothing and is refused).
    ///
    /// The world draws with each action's own weight by name (`ActionKind` in Simulation), never by position in
    /// a list, so the mix offers no ordered list of its weights.
    public var total: Double {
        consumable + nonConsumable + subscribe + nonRenewing + cancel + resume + upgrade + downgrade + refund
            + refundReversal + billingFailure + offerRedemption + priceIncrease + deviceReport + renewalExtension
    }
}

/// How fast simulated calendar time runs, as in the sandbox (a month can last seconds).
public struct TimeCompression: Sendable, Hashable, Decodable {
    /// Real seconds that one simulated 30-day month lasts.
    public var secondsPerMonth: Double = 60

    /// The default: a month lasts 60 seconds.
    public init() {}

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: ["secondsPerMonth"])
        secondsPerMonth = try f.number("secondsPerMonth", in: 0.1...2_592_000, default: 60)
    }

    /// Real seconds for a number of simulated days.
    public func seconds(days: Double) -> Double { days * secondsPerMonth / 30 }
}
