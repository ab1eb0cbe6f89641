extension Checker {
    /// Tuning of the checker.
    public struct Options: Sendable, Hashable {
        /// Results within this many seconds of an expiry or of a state change are unknown.
        public var boundarySeconds: Double = 2
        /// Whether a subscription in billing retry (without grace) must be entitled: nil accepts either.
        public var billingRetryEntitled: Bool? = nil
        /// Most witnesses kept (all violations are counted, each once however many probes see it).
        public var maxWitnesses = 1000
        /// The verdict is unknown when more than this fraction of decided-or-not checks is unknown, or of the
        /// genuine purchases was still held for delivery at the final probe (``Checker/heldAtEnd``).
        public var maxUnknownFraction = 0.2
        /// Recent history entries kept per transaction for witnesses, besides the decisive ones (the purchase,
        /// the first two and the latest acknowledgments, the first and the latest rejection, the refund).
        public var entriesPerTransaction = 3
        /// When an account holds more transactions than this, the oldest settled ones (consumables, past
        /// subscription periods, ended non-renewing subscriptions, purchases whose every attempt was rejected,
        /// refunded purchases whose refund settled beside the product's two latest) fold into per-product counts, so memory grows with accounts rather than with actions. A folded
        /// purchase still counts as bought and as unrefunded; folding only loosens bounds and never creates a
        /// violation. Eight: an account of a soak reaches its plateau (four to eight kept, 0.5-1 KB) in about
        /// half the time sixteen took, and the witnesses still cite the latest transactions.
        public var foldAbove = 8

        /// The defaults.
        public init() {}
    }
}
