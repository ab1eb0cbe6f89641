/// The products on sale, their groups and prices.
public struct Catalog: Sendable, Hashable, Decodable {
    /// ISO 4217 currency of every price.
    public var currency: String
    /// ISO 3166-1 alpha-3 storefront, such as `USA`.
    public var storefront: String
    /// Apple's numeric storefront identifier, such as `143441`.
    public var storefrontId: String
    /// Every product, of the four types.
    public var products: [Product]
    /// Subscription groups (auto-renewable products reference one by ``Product/group``).
    public var groups: [SubscriptionGroup]

    /// Strict decoding, with cross-references checked (each subscription's group exists, levels are unique).
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: ["currency", "storefront", "storefrontId", "products", "groups"])
        currency = try f.text("currency", default: "USD")
        storefront = try f.text("storefront", default: "USA")
        storefrontId = try f.text("storefrontId", default: "143441")
        products = try f.required("products")
        groups = try f.value("groups", default: [])
        if currency.count != 3 || currency.uppercased() != currency {
            throw ProfileIssue(path: f.at("currency"), expected: "an ISO 4217 code such as USD, found \"\(currency)\"")
        }
        if products.isEmpty { throw ProfileIssue(path: f.at("products"), expected: "at least one product") }
        var seen = Set<String>()
        for (index, product) in products.enumerated() {
            let path = f.at("products") + "[\(index)]"
            if !seen.insert(product.id).inserted {
                throw ProfileIssue(path: path + ".id", expected: "a unique product id, \"\(product.id)\" repeats")
            }
            guard product.type == .autoRenewable else { continue }
            guard let group = groups.first(where: { $0.id == product.group }) else {
                let names = groups.map(\.id).joined(separator: ", ")
                throw ProfileIssue(path: path + ".group", expected: "the id of a group in catalog.groups (\(names))")
            }
            let clash = products.prefix(index).first { $0.group == group.id && $0.level == product.level }
            if let clash {
                throw ProfileIssue(
                    path: path + ".level",
                    expected: "a level unique in group \(group.id), \(clash.id) already has \(product.level)"
                )
            }
        }
        var groupIds = Set<String>()
        for (index, group) in groups.enumerated() where !groupIds.insert(group.id).inserted {
            throw ProfileIssue(path: f.at("groups") + "[\(index)].id", expected: "a unique group id")
        }
    }

    /// Products of one type.
    public func products(of type: ProductKind) -> [Product] { products.filter { $0.type == type } }

    /// Subscriptions of one group, from the highest level of service (level 1) down.
    public func subscriptions(in group: String) -> [Product] {
        products.filter { $0.type == .autoRenewable && $0.group == group }.sorted { $0.level < $1.level }
    }

    func checkMix(_ mix: ActionMix, refundsMidStream: Bool, path: String) throws {
        let needs: [(String, Double, ProductKind)] = [
            ("consumable", mix.consumable, .consumable),
            ("nonConsumable", mix.nonConsumable, .nonConsumable),
            ("subscribe", mix.subscribe, .autoRenewable),
            ("nonRenewing", mix.nonRenewing, .nonRenewing),
        ]
        for (key, weight, type) in needs where weight > 0 && products(of: type).isEmpty {
            throw ProfileIssue(
                path: path + "." + key,
                expected: "weight 0, because catalog.products has no \(type.rawValue) product"
            )
        }
        try checkLifecycleMix(mix, refundsMidStream: refundsMidStream, path: path)
    }

    /// A lifecycle weight the world could never act on would silently turn into purchases: refused instead.
    private func checkLifecycleMix(_ mix: ActionMix, refundsMidStream: Bool, path: String) throws {
        let subscribing = mix.subscribe > 0 ? nil : "actionMix.subscribe is 0, so no account ever subscribes"
        let levels =
            groups.contains { subscriptions(in: $0.id).count > 1 }
            ? subscribing : "no catalog.groups entry has two or more autoRenewable levels"
        let promotional =
            products.contains { $0.offers.contains { $0.kind == .promotional } }
            ? subscribing : "no catalog.products entry has a promotional offer"
        let refunds =
            mix.refund > 0 || refundsMidStream ? nil : "actionMix.refund is 0 and faults.refundMidStream is off"
        let needs: [(String, Double, String?)] = [
            ("cancel", mix.cancel, subscribing),
            ("resume", mix.resume, subscribing),
            ("upgrade", mix.upgrade, levels),
            ("downgrade", mix.downgrade, levels),
            ("refundReversal", mix.refundReversal, refunds),
            ("billingFailure", mix.billingFailure, subscribing),
            ("offerRedemption", mix.offerRedemption, promotional),
            ("priceIncrease", mix.priceIncrease, subscribing),
            ("renewalExtension", mix.renewalExtension, subscribing),
        ]
        for (key, weight, reason) in needs where weight > 0 {
            guard let reason else { continue }
            throw ProfileIssue(path: path + "." + key, expected: "weight 0, because \(reason)")
        }
    }
}

/// The four product types.
public enum ProductKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// Used once, bought again (coins): `Consumable`.
    case consumable
    /// Bought once, owned forever: `Non-Consumable`.
    case nonConsumable
    /// Renews every period until cancelled: `Auto-Renewable Subscription`.
    case autoRenewable
    /// Lasts a fixed time, does not renew: `Non-Renewing Subscription`.
    case nonRenewing
}

/// One product.
public struct Product: Sendable, Hashable, Decodable {
    /// The product identifier.
    public var id: String
    /// The product type.
    public var type: ProductKind
    /// The price in milliunits (9.99 = 9990).
    public var priceMilli: Int64
    /// The subscription group (auto-renewable only).
    public var group: String?
    /// The level of service in its group, 1 being the highest (auto-renewable only).
    public var level: Int
    /// Real seconds one period lasts (auto-renewable and non-renewing).
    public var periodSeconds: Double
    /// Introductory, promotional, offer-code and win-back offers (auto-renewable only).
    public var offers: [Offer]
    /// Whether Family Sharing is enabled (non-consumable and auto-renewable only).
    public var familyShareable: Bool

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(
            decoder,
            allowed: ["id", "type", "priceMilli", "group", "level", "periodSeconds", "offers", "familyShareable"]
        )
        id = try f.text("id", default: nil)
        type = ProductKind(rawValue: try f.choice("type", ProductKind.allCases.map(\.rawValue), default: nil))!
        priceMilli = try f.integer("priceMilli", in: 0...1_000_000_000, default: nil)
        let periodic = type == .autoRenewable || type == .nonRenewing
        if type == .autoRenewable {
            group = try f.text("group", default: nil)
            level = Int(try f.integer("level", in: 1...100, default: 1))
            offers = try f.value("offers", default: [])
        } else {
            for key in ["group", "level", "offers"] where f.has(key) {
                throw ProfileIssue(path: f.at(key), expected: "no \(key) on a \(type.rawValue) product")
            }
            group = nil
            level = 1
            offers = []
        }
        if periodic {
            periodSeconds = try f.number("periodSeconds", in: 0.1...31_536_000, default: nil)
        } else {
            if f.has("periodSeconds") {
                throw ProfileIssue(
                    path: f.at("periodSeconds"),
                    expected: "no periodSeconds on a \(type.rawValue) product"
                )
            }
            periodSeconds = 0
        }
        familyShareable = try f.value("familyShareable", default: false)
        if familyShareable && !(type == .nonConsumable || type == .autoRenewable) {
            throw ProfileIssue(
                path: f.at("familyShareable"),
                expected: "false: only non-consumables and auto-renewable subscriptions can be shared"
            )
        }
    }
}

/// A subscription offer.
public struct Offer: Sendable, Hashable, Decodable {
    /// The offer kinds with Apple's `offerType` numbers.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// 1
        case introductory
        /// 2
        case promotional
        /// 3
        case offerCode
        /// 4
        case winBack
    }
    /// The discount kinds.
    public enum Discount: String, Sendable, Hashable, CaseIterable {
        /// `FREE_TRIAL`
        case freeTrial
        /// `PAY_AS_YOU_GO`
        case payAsYouGo
        /// `PAY_UP_FRONT`
        case payUpFront
    }
    /// The offer identifier (absent for introductory offers in Apple's payloads).
    public var id: String
    /// The offer kind.
    public var kind: Kind
    /// The discount kind.
    public var discount: Discount
    /// The price per discounted period in milliunits (0 for a free trial).
    public var priceMilli: Int64
    /// How many periods the offer lasts.
    public var periods: Int

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: ["id", "kind", "discount", "priceMilli", "periods"])
        id = try f.text("id", default: nil)
        kind = Kind(rawValue: try f.choice("kind", Kind.allCases.map(\.rawValue), default: nil))!
        discount = Discount(rawValue: try f.choice("discount", Discount.allCases.map(\.rawValue), default: nil))!
        priceMilli = try f.integer("priceMilli", in: 0...1_000_000_000, default: 0)
        periods = Int(try f.integer("periods", in: 1...24, default: 1))
        if discount == .freeTrial && priceMilli != 0 {
            throw ProfileIssue(path: f.at("priceMilli"), expected: "0 for a freeTrial offer, found \(priceMilli)")
        }
    }
}

/// A subscription group: its grace period and billing retry window in real seconds.
public struct SubscriptionGroup: Sendable, Hashable, Decodable {
    /// The group identifier (`subscriptionGroupIdentifier`).
    public var id: String
    /// Billing grace period in real seconds (0 disables grace).
    public var gracePeriodSeconds: Double
    /// Billing retry window in real seconds, after which the subscription expires.
    public var billingRetrySeconds: Double

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: ["id", "gracePeriodSeconds", "billingRetrySeconds"])
        id = try f.text("id", default: nil)
        gracePeriodSeconds = try f.number("gracePeriodSeconds", in: 0...31_536_000, default: 0)
        billingRetrySeconds = try f.number("billingRetrySeconds", in: 0...31_536_000, default: 60)
        if gracePeriodSeconds > billingRetrySeconds {
            throw ProfileIssue(
                path: f.at("gracePeriodSeconds"),
                expected: "at most billingRetrySeconds (\(billingRetrySeconds)), found \(gracePeriodSeconds)"
            )
        }
    }
}
