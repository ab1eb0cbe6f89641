internal import AppStoreModel

// The subscription side of applying an event: one row per subscription (original transaction), holding its
// newest signed state and its current transaction.
extension LedgerStore {
    /// Moves the subscription to the state this event reports, if the event is newer than what is stored.
    func applySubscription(
        _ event: LedgerEvent,
        _ transaction: JWSTransactionDecodedPayload,
        _ view: TransactionView,
        now: Int64,
        in database: Database
    ) throws {
        let derived = Self.status(of: event, transaction, now: now)
        guard
            let status = policy.subscriptionStatus(
                derived: derived,
                revokingWithoutStatus: event.isRevoking && event.status == nil
            )
        else { return }
        // One read for every decision below: the stored state, and the purchase date of its current transaction.
        let existing = try database.query(
            """
            SELECT s.signed_date, s.transaction_id, s.expires_date, t.purchase_date FROM subscriptions s
            LEFT JOIN transactions t ON t.transaction_id = s.transaction_id WHERE s.original_transaction_id = ?
            """,
            [.text(view.originalId)]
        ).first
        // The status is the event's own, never its transaction's revocation as stored now: that revocation is
        // ordered apart (a reversal may still come, signed before this event) and the probe reads it from the
        // current transaction's row. Stamping it here with this event's signed date would outrank that reversal.
        let state = SubscriptionState(event, transaction, view, status: status)
        guard let existing else {
            try database.query(
                """
                INSERT INTO subscriptions (app_account_token, product_id, transaction_id, status, expires_date,
                    grace_expires_date, auto_renew_status, signed_date, original_transaction_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                state.values
            )
            return
        }
        let moves = policy.movesCurrentPeriod(
            purchase: transaction.purchaseDate ?? 0,
            expires: transaction.expiresDate ?? 0,
            storedPurchase: existing[3].int ?? 0,
            storedExpires: existing[2].int ?? 0
        )
        // An event without `data.status` (the device path) reports only its transaction's state: that is the
        // subscription's only while the transaction is, or becomes, the current one. A refunded or lapsed older
        // period says nothing of the current one.
        let current = moves || existing[1].string == transaction.transactionId
        let newer =
            policy.replaces(incoming: event.signedDate, stored: existing[0].int ?? 0)
            && (event.status != nil || current)
        // A refund or reversal that trails a newer view still counts: on its transaction's row, read by the probe.
        try update(state, transaction, moves: moves, newer: newer, in: database)
    }

    /// The status an event reports: its `data.status`, else what the transaction itself shows.
    private static func status(of event: LedgerEvent, _ transaction: JWSTransactionDecodedPayload, now: Int64) -> Status
    {
        if let reported = event.status { return reported }
        if transaction.revocationDate != nil { return .revoked }
        if let expires = transaction.expiresDate, expires <= now { return .expired }
        return .active
    }

    /// Updates a stored subscription with an event. Its status, grace period and renewal preference move by
    /// signing order (only a newer event's count), its period and product by purchase order: a newer
    /// notification may carry an older transaction (CONSUMPTION_REQUEST, REFUND_DECLINED, the refund of an older
    /// period), and a notification about the older period may arrive first though signed with or after a later
    /// purchase. The current transaction is the one bought last. An upgrade replaces it at once, even if it ends
    /// sooner than the period it cuts short; a renewal extension re-signs it with a later end. `moves` says the
    /// event's transaction becomes the current one, `newer` that its status counts.
    private func update(
        _ state: SubscriptionState,
        _ transaction: JWSTransactionDecodedPayload,
        moves: Bool,
        newer: Bool,
        in database: Database
    ) throws {
        let expires = transaction.expiresDate ?? 0
        guard moves || newer else { return }
        let switches: SQLValue = .integer(moves ? 1 : 0)
        let restates: SQLValue = .integer(newer ? 1 : 0)
        let token: SQLValue = .text(state.token)
        try database.query(
            """
            UPDATE subscriptions SET app_account_token = CASE WHEN ? = '' THEN app_account_token ELSE ? END,
                product_id = CASE WHEN ? THEN ? ELSE product_id END,
                transaction_id = CASE WHEN ? THEN ? ELSE transaction_id END,
                expires_date = CASE WHEN ? THEN NULLIF(?, 0) ELSE expires_date END,
                status = CASE WHEN ? THEN ? ELSE status END,
                grace_expires_date = CASE WHEN ? THEN ? ELSE grace_expires_date END,
                auto_renew_status = CASE WHEN ? THEN ? ELSE auto_renew_status END,
                signed_date = CASE WHEN ? THEN ? ELSE signed_date END
            WHERE original_transaction_id = ?
            """,
            [
                token, token, switches, .text(state.productId), switches, .text(state.transactionId), switches,
                .integer(expires), restates, .integer(Int64(state.status.rawValue)), restates,
                SQLValue(state.graceExpiresDate), restates, SQLValue(state.autoRenewStatus), restates,
                .integer(state.signedDate), .text(state.originalId),
            ]
        )
    }
}

/// The subscription row an event would write.
private struct SubscriptionState {
    var token: String
    var productId: String
    var transactionId: String
    var status: Status
    var expiresDate: Int64?
    var graceExpiresDate: Int64?
    var autoRenewStatus: Int64?
    var signedDate: Int64
    var originalId: String

    init(_ event: LedgerEvent, _ transaction: JWSTransactionDecodedPayload, _ view: TransactionView, status: Status) {
        token = view.token
        productId = transaction.productId ?? ""
        transactionId = transaction.transactionId ?? view.originalId
        self.status = status
        expiresDate = transaction.expiresDate
        graceExpiresDate = event.renewal?.gracePeriodExpiresDate
        autoRenewStatus = event.renewal?.autoRenewStatus.map { Int64($0.rawValue) }
        signedDate = event.signedDate
        originalId = view.originalId
    }

    /// The INSERT's bindings, in its column order.
    var values: [SQLValue] {
        [
            .text(token), .text(productId), .text(transactionId), .integer(Int64(status.rawValue)),
            SQLValue(expiresDate),
            SQLValue(graceExpiresDate), SQLValue(autoRenewStatus), .integer(signedDate), .text(originalId),
        ]
    }
}
