/// What a target grants one account: the contract's normalized probe JSON.
///
/// `{"entitlements": [{"productId", "transactionId"?, "expiresDate"?}], "balances": {"<productId>": n},
/// "grants": [{"transactionId", "count"}]?, "transactions": [{"transactionId", "productId", "state",
/// "revokedAt"?, "periodStart"?, "periodEnd"?}]?, "refunds": [{"transactionId", "count"}]?}`
public struct AccountState: Sendable, Hashable, Codable {
    /// One active entitlement.
    public struct Entitlement: Sendable, Hashable, Codable {
        /// The product unlocked.
        public var productId: String
        /// The transaction behind it, when the target says.
        public var transactionId: String?
        /// When it ends (ms), for subscriptions.
        public var expiresDate: Int64?

        /// Creates an entitlement.
        public init(productId: String, transactionId: String? = nil, expiresDate: Int64? = nil) {
            self.productId = productId
            self.transactionId = transactionId
            self.expiresDate = expiresDate
        }
    }
    /// How many times the target did something to one transaction: granted it (``grants``), or applied a refund
    /// to it (``refunds``). More than once is a double grant, or a double refund beyond the App Store's own
    /// refunds; a transaction listed twice counts the sum.
    public struct TransactionCount: Sendable, Hashable, Codable {
        /// The transaction.
        public var transactionId: String
        /// How many times.
        public var count: Int

        /// Creates a count.
        public init(transactionId: String, count: Int) {
            self.transactionId = transactionId
            self.count = count
        }
    }
    /// How many times one transaction was granted.
    public typealias Grant = TransactionCount
    /// How many times the target applied a refund (or a revocation) to one transaction.
    public typealias Refund = TransactionCount
    /// What the target's books say about one transaction: whether it still grants, and the period it covers.
    ///
    /// Bookkeeping bugs show here before they show in entitlements (a refund that revokes the wrong period, or
    /// stretches the previous one), so the checker compares each known transaction with the oracle.
    public struct TransactionState: Sendable, Hashable, Codable {
        /// A transaction's standing in the target's books.
        public enum Status: String, Sendable, Hashable, Codable, CaseIterable {
            /// It grants what it bought.
            case granted
            /// It was taken back (a refund or a revocation).
            case revoked
        }
        /// The transaction.
        public var transactionId: String
        /// Its product.
        public var productId: String
        /// Granted or revoked.
        public var state: Status
        /// When the target revoked it (ms), if it says.
        public var revokedAt: Int64?
        /// The start of the period it covers (ms), for subscriptions.
        public var periodStart: Int64?
        /// The end of the period it covers (ms), for subscriptions.
        public var periodEnd: Int64?

        /// Creates a transaction's state.
        public init(
            transactionId: String,
            productId: String,
            state: Status,
            revokedAt: Int64? = nil,
            periodStart: Int64? = nil,
            periodEnd: Int64? = nil
        ) {
            self.transactionId = transactionId
            self.productId = productId
            self.state = state
            self.revokedAt = revokedAt
            self.periodStart = periodStart
            self.periodEnd = periodEnd
        }
    }
    /// Active entitlements.
    public var entitlements: [Entitlement]
    /// Consumable balances by product.
    public var balances: [String: Int]
    /// Per-transaction grant counts, when the target exposes them.
    public var grants: [Grant]?
    /// Per-transaction state, when the target exposes it.
    public var transactions: [TransactionState]?
    /// Per-transaction refund counts, when the target exposes them.
    public var refunds: [Refund]?

    /// Creates a state.
    public init(
        entitlements: [Entitlement] = [],
        balances: [String: Int] = [:],
        grants: [Grant]? = nil,
        transactions: [TransactionState]? = nil,
        refunds: [Refund]? = nil
    ) {
        self.entitlements = entitlements
        self.balances = balances
        self.grants = grants
        self.transactions = transactions
        self.refunds = refunds
    }

    /// Lenient decoding: a missing `entitlements` or `balances` is empty; extra keys are ignored. A
    /// `transactions` entry whose `state` is neither `granted` nor `revoked` fails the decoding, so the
    /// account's checks are unknown rather than guessed.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        entitlements = try c.decodeIfPresent([Entitlement].self, forKey: .entitlements) ?? []
        balances = try c.decodeIfPresent([String: Int].self, forKey: .balances) ?? [:]
        grants = try c.decodeIfPresent([Grant].self, forKey: .grants)
        transactions = try c.decodeIfPresent([TransactionState].self, forKey: .transactions)
        refunds = try c.decodeIfPresent([Refund].self, forKey: .refunds)
    }

    private enum Keys: String, CodingKey { case entitlements, balances, grants, transactions, refunds }
}
