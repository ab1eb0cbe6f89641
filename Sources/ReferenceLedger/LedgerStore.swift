internal import Foundation
import Synchronization

/// One verified input, ready to apply: a notification (with its nested payloads) or a device delivery.
struct LedgerEvent: Sendable {
    enum Source: String, Sendable {
        case webhook
        case device
    }

    var source: Source
    var notificationUUID: String?
    var notificationType: String?
    var subtype: String?
    /// The ordering key: the notification's signedDate, or the transaction's for a device delivery.
    var signedDate: Int64
    var status: Int32?
    var transaction: TransactionFacts?
    var renewal: RenewalFacts?
}

/// What applying an event did.
struct ApplyOutcome: Sendable, Equatable {
    var duplicate = false
    var granted = 0
}

/// A device report of a purchase outcome (never a grant in the correct ledger).
struct DeviceReport: Sendable {
    var purchaseResult: String
    var productId: String
    var appAccountToken: String
    /// The transaction the app claims (reports of a successful purchase may carry one).
    var transactionId: String?
}

/// What the probe returns for one account (the target contract's JSON).
struct AccountState: Sendable, Codable, Equatable {
    struct Entitlement: Sendable, Codable, Equatable {
        var productId: String
        var transactionId: String?
        var expiresDate: Int64?
    }

    struct Grant: Sendable, Codable, Equatable {
        var transactionId: String
        var count: Int
    }

    var entitlements: [Entitlement]
    var balances: [String: Int64]
    var grants: [Grant]
}

/// The ledger's SQLite state: one writer connection (SQLite has one writer anyway) and one reader, each
/// behind its own lock, so probes never wait for commits in WAL mode.
final class LedgerStore: Sendable {
    private let writer: Mutex<Database>
    private let reader: Mutex<Database>
    private let lock: DatabaseLock
    private let flaws: Set<LedgerFlaw>

    static let consumable = "Consumable"
    static let nonConsumable = "Non-Consumable"
    static let autoRenewable = "Auto-Renewable Subscription"
    static let nonRenewing = "Non-Renewing Subscription"

    /// Subscription statuses (`data.status`).
    enum Status {
        static let active: Int32 = 1
        static let expired: Int32 = 2
        static let billingRetry: Int32 = 3
        static let gracePeriod: Int32 = 4
        static let revoked: Int32 = 5
    }

    /// Takes the database's lock, opens it (creating and migrating as needed) and checks that it can be
    /// written, so that a ledger which could not keep a grant refuses to start instead of answering 500.
    /// - Throws: `LedgerError` naming the path: a path that keeps nothing (`""`, `:memory:`), a database that
    ///   cannot be written or that another ledger holds, or one that is not a ledger database.
    init(path: String, flaws: Set<LedgerFlaw>) throws {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else {
            throw LedgerError(
                message: "database path '\(path)' would be a temporary database that keeps nothing; name a file"
            )
        }
        lock = try DatabaseLock(path: path)
        do {
            let writerDatabase = try Database(path: path)
            try Schema.prepare(writerDatabase)
            // Writes the schema version back: fails at once when SQLite opened the file read-only or cannot
            // create the WAL beside it, which otherwise shows only as a 500 on every write.
            try writerDatabase.transaction {
                let version = try writerDatabase.query("PRAGMA user_version").first?.first?.int ?? 0
                try writerDatabase.execute("PRAGMA user_version = \(version)")
            }
            let readerDatabase = try Database(path: path)
            try readerDatabase.execute("PRAGMA busy_timeout = 5000")
            writer = Mutex(writerDatabase)
            reader = Mutex(readerDatabase)
        } catch let error as SQLiteError {
            lock.release()
            throw LedgerError(Self.kind(of: error), message: "database \(path): \(error)")
        } catch {
            lock.release()
            throw error
        }
        self.flaws = flaws
    }

    /// Write and open failures mean the file cannot be written; anything else, that it is not a ledger
    /// database.
    private static func kind(of error: SQLiteError) -> LedgerError.Kind {
        switch error.code & 0xff {
        case 3, 8, 10, 13, 14: .databaseNotWritable  // SQLITE_PERM, READONLY, IOERR, FULL, CANTOPEN
        default: .malformedDatabase
        }
    }

    /// Checkpoints the WAL into the database file (TRUNCATE), closes both connections (the last close
    /// removes the `-wal` and `-shm` files) and releases the lock. Safe to call twice.
    func close() {
        reader.withLock { $0.close() }
        writer.withLock { database in
            try? database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            database.close()
        }
        lock.release()
    }

    /// The schema version of the open database.
    var schemaVersion: Int {
        reader.withLock { database in
            Int((try? database.query("PRAGMA user_version").first?.first?.int) ?? 0)
        }
    }

    /// Applies events in one durable transaction; returns once committed (synchronous=FULL).
    func apply(_ events: [LedgerEvent], now: Int64) throws -> [ApplyOutcome] {
        try writer.withLock { database in
            try database.transaction {
                try events.map { try apply($0, now: now, in: database) }
            }
        }
    }

    /// Records a device report; grants only with the `unlock-on-pending` flaw (a pending report) or
    /// the `trust-client-claims` flaw (a report of a successful purchase, under the claimed ID).
    func record(_ report: DeviceReport, now: Int64) throws -> ApplyOutcome {
        try writer.withLock { database in
            try database.transaction {
                try database.query(
                    "INSERT INTO reports (app_account_token, product_id, purchase_result, received_at) VALUES (?, ?, ?, ?)",
                    [
                        .text(report.appAccountToken), .text(report.productId), .text(report.purchaseResult),
                        .integer(now),
                    ]
                )
                let claimed = flaws.contains(.trustClientClaims) && report.purchaseResult == "success"
                guard claimed || (flaws.contains(.unlockOnPending) && report.purchaseResult == "pending") else {
                    return ApplyOutcome()
                }
                let transactionId =
                    claimed
                    ? report.transactionId ?? "claim-\(UUID().uuidString.lowercased())"
                    : "report-\(UUID().uuidString.lowercased())"
                try database.query(
                    """
                    INSERT INTO transactions (transaction_id, original_transaction_id, app_account_token, product_id,
                        product_type, quantity, signed_date) VALUES (?, ?, ?, ?, ?, 1, ?)
                    """,
                    [
                        .text(transactionId), .text(transactionId), .text(report.appAccountToken),
                        .text(report.productId), .text(Self.nonConsumable), .integer(now),
                    ]
                )
                try insertGrant(
                    key: transactionId,
                    transactionId: transactionId,
                    token: report.appAccountToken,
                    productId: report.productId,
                    quantity: 1,
                    source: "report",
                    now: now,
                    in: database
                )
                return ApplyOutcome(granted: 1)
            }
        }
    }

    private func apply(_ event: LedgerEvent, now: Int64, in database: Database) throws -> ApplyOutcome {
        var outcome = ApplyOutcome()
        if let uuid = event.notificationUUID {
            try database.query(
                """
                INSERT OR IGNORE INTO notifications (notification_uuid, notification_type, subtype, signed_date,
                    received_at) VALUES (?, ?, ?, ?, ?)
                """,
                [
                    .text(uuid), .text(event.notificationType ?? ""), SQLValue(event.subtype),
                    .integer(event.signedDate), .integer(now),
                ]
            )
            if database.changes == 0 && !flaws.contains(.doubleGrant) {
                outcome.duplicate = true
                return outcome
            }
        }
        guard let signed = event.transaction else { return outcome }
        let transaction = try refundTarget(signed, of: event, in: database)
        guard let transactionId = transaction.transactionId, let productId = transaction.productId else {
            return outcome
        }
        let token = transaction.appAccountToken?.lowercased() ?? ""
        let originalId = transaction.originalTransactionId ?? transactionId
        let productType = transaction.type ?? Self.nonConsumable
        let transactionSigned = transaction.signedDate ?? event.signedDate
        var revocation = transaction.revocationDate
        let revokingType = event.notificationType == "REFUND" || event.notificationType == "REVOKE"
        if revocation == nil && revokingType {
            revocation = event.signedDate
        }
        if flaws.contains(.ignoreRefund) {
            revocation = nil
        }

        // The transaction row holds the newest signed view; an older view never overrides it. Revocation is
        // tracked apart: it is sticky (a replayed or re-signed purchase never carries news of a refund, so it
        // cannot undo one); only a REFUND_REVERSED signed after the refund lifts it, and a refund signed
        // after the reversal sets it again.
        let existing = try database.query(
            """
            SELECT signed_date, revocation_date, revocation_signed_date, reversal_signed_date FROM transactions
            WHERE transaction_id = ?
            """,
            [.text(transactionId)]
        ).first
        var resurrected = false
        if let existing {
            let storedSigned = existing[0].int ?? 0
            let storedRevocation = existing[1].int
            var revocationSigned = existing[2].int
            var reversalSigned = existing[3].int
            let update = transactionSigned > storedSigned || flaws.contains(.staleOverwrite)
            var newRevocation = storedRevocation
            let isReversal = event.notificationType == "REFUND_REVERSED"
            if flaws.contains(.staleOverwrite) {
                if update { newRevocation = revocation }
            } else if let revocation {
                if reversalSigned.map({ transactionSigned > $0 }) ?? true {
                    newRevocation = revocation
                    revocationSigned = max(revocationSigned ?? .min, transactionSigned)
                }
            } else if isReversal {
                if revocationSigned.map({ transactionSigned > $0 }) ?? true {
                    newRevocation = nil
                    reversalSigned = max(reversalSigned ?? .min, transactionSigned)
                }
            } else if storedRevocation != nil && flaws.contains(.resurrectAfterRefund) {
                newRevocation = nil
                resurrected = true
            }
            if update {
                try database.query(
                    """
                    UPDATE transactions SET product_id = ?, product_type = ?, purchase_date = ?, expires_date = ?,
                        quantity = ?, is_upgraded = ?, signed_date = ?,
                        app_account_token = CASE WHEN ? = '' THEN app_account_token ELSE ? END
                    WHERE transaction_id = ?
                    """,
                    [
                        .text(productId), .text(productType), SQLValue(transaction.purchaseDate),
                        SQLValue(transaction.expiresDate), .integer(Int64(transaction.quantity ?? 1)),
                        .integer(transaction.isUpgraded == true ? 1 : 0), .integer(transactionSigned), .text(token),
                        .text(token), .text(transactionId),
                    ]
                )
            }
            try database.query(
                """
                UPDATE transactions SET revocation_date = ?, revocation_signed_date = ?, reversal_signed_date = ?
                WHERE transaction_id = ?
                """,
                [SQLValue(newRevocation), SQLValue(revocationSigned), SQLValue(reversalSigned), .text(transactionId)]
            )
        } else {
            try database.query(
                """
                INSERT INTO transactions (transaction_id, original_transaction_id, app_account_token, product_id,
                    product_type, purchase_date, expires_date, quantity, revocation_date, is_upgraded, signed_date,
                    revocation_signed_date, reversal_signed_date)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(transactionId), .text(originalId), .text(token), .text(productId), .text(productType),
                    SQLValue(transaction.purchaseDate), SQLValue(transaction.expiresDate),
                    .integer(Int64(transaction.quantity ?? 1)), SQLValue(revocation),
                    .integer(transaction.isUpgraded == true ? 1 : 0), .integer(transactionSigned),
                    revocation == nil ? .null : .integer(transactionSigned),
                    event.notificationType == "REFUND_REVERSED" ? .integer(transactionSigned) : .null,
                ]
            )
        }

        // Grant once per transaction, unless it is revoked now. The grant key carries the dedupe.
        let current = try database.query(
            "SELECT revocation_date, app_account_token FROM transactions WHERE transaction_id = ?",
            [.text(transactionId)]
        ).first
        let revokedNow = current?[0].int != nil
        if let current, !revokedNow {
            let key: String
            if flaws.contains(.doubleGrant) || resurrected {
                key = "\(transactionId)#\(UUID().uuidString)"
            } else if flaws.contains(.dualPathDoubleGrant) {
                key = "\(event.source.rawValue):\(transactionId)"
            } else {
                key = transactionId
            }
            let owner = current[1].string ?? token
            if try insertGrant(
                key: key,
                transactionId: transactionId,
                token: owner,
                productId: productId,
                quantity: Int64(transaction.quantity ?? 1),
                source: event.source.rawValue,
                now: now,
                in: database
            ) {
                outcome.granted += 1
            }
        }

        if productType == Self.autoRenewable && transaction.isUpgraded != true {
            try applySubscription(
                event,
                transaction,
                originalId: originalId,
                token: token,
                revoked: revokedNow,
                now: now,
                in: database
            )
        }
        return outcome
    }

    /// The transaction a refund or revocation applies to: the signed one, or with the `refund-by-product` flaw
    /// the account's latest stored transaction of the same product (for a subscription, its current period).
    private func refundTarget(
        _ signed: TransactionFacts,
        of event: LedgerEvent,
        in database: Database
    ) throws -> TransactionFacts {
        let revoking =
            signed.revocationDate != nil || event.notificationType == "REFUND" || event.notificationType == "REVOKE"
        guard flaws.contains(.refundByProduct), revoking, let token = signed.appAccountToken?.lowercased(),
            let productId = signed.productId
        else { return signed }
        let latest = try database.query(
            """
            SELECT transaction_id, original_transaction_id, purchase_date, expires_date, quantity FROM transactions
            WHERE app_account_token = ? AND product_id = ?
            ORDER BY COALESCE(expires_date, purchase_date, signed_date) DESC, rowid DESC LIMIT 1
            """,
            [.text(token), .text(productId)]
        ).first
        guard let latest, let id = latest[0].string else { return signed }
        var target = signed
        target.transactionId = id
        target.originalTransactionId = latest[1].string ?? id
        target.purchaseDate = latest[2].int
        target.expiresDate = latest[3].int
        target.quantity = latest[4].int.map { Int32($0) }
        return target
    }

    /// Moves the subscription to the state this event reports, if the event is newer than what is stored.
    private func applySubscription(
        _ event: LedgerEvent,
        _ transaction: TransactionFacts,
        originalId: String,
        token: String,
        revoked: Bool,
        now: Int64,
        in database: Database
    ) throws {
        var status: Int32
        if let reported = event.status {
            status = reported
        } else if transaction.revocationDate != nil {
            status = Status.revoked
        } else if let expires = transaction.expiresDate, expires <= now {
            status = Status.expired
        } else {
            status = Status.active
        }
        if flaws.contains(.ignoreRefund) && status == Status.revoked {
            return
        }
        let revokingType = event.notificationType == "REFUND" || event.notificationType == "REVOKE"
        if revokingType && event.status == nil && !flaws.contains(.ignoreRefund) {
            status = Status.revoked
        }
        let existing = try database.query(
            "SELECT signed_date, transaction_id, expires_date FROM subscriptions WHERE original_transaction_id = ?",
            [.text(originalId)]
        ).first
        // This event's transaction is revoked (sticky, see above): if it is the subscription's current
        // transaction, the subscription is revoked whatever a replayed or re-signed copy says.
        if revoked && !flaws.contains(.staleOverwrite) && !flaws.contains(.ignoreRefund) {
            let current =
                existing.map { row in
                    row[1].string == transaction.transactionId || (transaction.expiresDate ?? 0) >= (row[2].int ?? 0)
                } ?? true
            if current { status = Status.revoked }
        }
        let values: [SQLValue] = [
            .text(token), .text(transaction.productId ?? ""), .text(transaction.transactionId ?? originalId),
            .integer(Int64(status)), SQLValue(transaction.expiresDate), SQLValue(event.renewal?.gracePeriodExpiresDate),
            SQLValue(event.renewal?.autoRenewStatus.map { Int64($0) }), .integer(event.signedDate), .text(originalId),
        ]
        if let existing {
            guard event.signedDate > (existing[0].int ?? 0) || flaws.contains(.staleOverwrite) else {
                if status == Status.revoked && revoked {
                    // A refund that ties with (or trails) a newer view of the same subscription still revokes it.
                    try database.query(
                        "UPDATE subscriptions SET status = ? WHERE original_transaction_id = ? AND transaction_id = ?",
                        [.integer(Int64(Status.revoked)), .text(originalId), .text(transaction.transactionId ?? "")]
                    )
                }
                return
            }
            if flaws.contains(.staleOverwrite) {
                try database.query(
                    """
                    UPDATE subscriptions SET app_account_token = CASE WHEN ? = '' THEN app_account_token ELSE ? END,
                        product_id = ?, transaction_id = ?, status = ?, expires_date = ?, grace_expires_date = ?,
                        auto_renew_status = ?, signed_date = ?
                    WHERE original_transaction_id = ?
                    """,
                    [values[0]] + values
                )
                return
            }
            // A newer notification may carry an older transaction (CONSUMPTION_REQUEST, REFUND_DECLINED, the
            // refund of an older period): its status is current, but the period and product stay those of the
            // current transaction, the one bought last. An upgrade replaces it at once, even if it ends sooner
            // than the period it cuts short; a renewal extension re-signs it with a later end.
            let expires = transaction.expiresDate ?? 0
            let stored = try database.query(
                """
                SELECT t.purchase_date, s.expires_date FROM subscriptions s
                LEFT JOIN transactions t ON t.transaction_id = s.transaction_id WHERE s.original_transaction_id = ?
                """,
                [.text(originalId)]
            ).first
            let purchase = transaction.purchaseDate ?? 0
            let storedPurchase = stored?[0].int ?? 0
            let current = purchase > storedPurchase || (purchase == storedPurchase && expires >= stored?[1].int ?? 0)
            let switches: SQLValue = .integer(current ? 1 : 0)
            try database.query(
                """
                UPDATE subscriptions SET app_account_token = CASE WHEN ? = '' THEN app_account_token ELSE ? END,
                    product_id = CASE WHEN ? THEN ? ELSE product_id END,
                    transaction_id = CASE WHEN ? THEN ? ELSE transaction_id END,
                    expires_date = CASE WHEN ? THEN NULLIF(?, 0) ELSE expires_date END,
                    status = ?, grace_expires_date = ?, auto_renew_status = ?, signed_date = ?
                WHERE original_transaction_id = ?
                """,
                [
                    values[0], values[0], switches, values[1], switches, values[2], switches, .integer(expires),
                    values[3], values[5], values[6], values[7], values[8],
                ]
            )
        } else {
            try database.query(
                """
                INSERT INTO subscriptions (app_account_token, product_id, transaction_id, status, expires_date,
                    grace_expires_date, auto_renew_status, signed_date, original_transaction_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                values
            )
        }
    }

    @discardableResult
    private func insertGrant(
        key: String,
        transactionId: String,
        token: String,
        productId: String,
        quantity: Int64,
        source: String,
        now: Int64,
        in database: Database
    ) throws -> Bool {
        try database.query(
            """
            INSERT OR IGNORE INTO grants (grant_key, transaction_id, app_account_token, product_id, quantity, source,
                granted_at) VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(key), .text(transactionId), .text(token), .text(productId), .integer(quantity), .text(source),
                .integer(now),
            ]
        )
        return database.changes == 1
    }

    /// What the account is granted at `now` (ms).
    func account(_ token: String, now: Int64) throws -> AccountState {
        try reader.withLock { database in
            try database.transaction {
                try account(token, now: now, in: database)
            }
        }
    }

    private func account(_ token: String, now: Int64, in database: Database) throws -> AccountState {
        var state = AccountState(entitlements: [], balances: [:], grants: [])
        let grantRows = try database.query(AccountQuery.grants, [.text(token)])
        state.grants = grantRows.map {
            AccountState.Grant(transactionId: $0[0].string ?? "", count: Int($0[1].int ?? 0))
        }

        let balanceRows = try database.query(AccountQuery.balances, [.text(token), .text(Self.consumable)])
        for row in balanceRows {
            if let product = row[0].string { state.balances[product] = row[1].int ?? 0 }
        }

        let ownedRows = try database.query(
            AccountQuery.owned,
            [.text(token), .text(Self.nonConsumable), .text(Self.nonRenewing)]
        )
        for row in ownedRows {
            let expires = row[2].int
            if let expires, expires <= now { continue }
            state.entitlements.append(
                AccountState.Entitlement(
                    productId: row[0].string ?? "",
                    transactionId: row[1].string,
                    expiresDate: expires
                )
            )
        }

        let subscriptionRows = try database.query(AccountQuery.subscriptions, [.text(token)])
        for row in subscriptionRows {
            let status = Int32(row[2].int ?? 0)
            let expires = row[3].int
            let grace = row[4].int
            let entitled: Bool
            switch status {
            case Status.active: entitled = expires.map { $0 > now } ?? true
            case Status.gracePeriod: entitled = grace.map { $0 > now } ?? true
            default: entitled = false
            }
            if entitled {
                state.entitlements.append(
                    AccountState.Entitlement(
                        productId: row[0].string ?? "",
                        transactionId: row[1].string,
                        expiresDate: status == Status.gracePeriod ? (grace ?? expires) : expires
                    )
                )
            }
        }
        return state
    }

    /// Counts for `/health` and `/metrics`.
    func totals() -> (notifications: Int64, transactions: Int64, grants: Int64) {
        reader.withLock { database in
            let rows = try? database.query(
                """
                SELECT (SELECT COUNT(*) FROM notifications), (SELECT COUNT(*) FROM transactions),
                    (SELECT COUNT(*) FROM grants)
                """
            )
            let row = rows?.first ?? []
            return (row.first?.int ?? 0, row.dropFirst().first?.int ?? 0, row.dropFirst(2).first?.int ?? 0)
        }
    }
}
