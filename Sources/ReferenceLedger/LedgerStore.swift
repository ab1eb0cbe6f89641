internal import AppStoreModel
internal import Foundation
import Synchronization

/// The ledger's SQLite state: one writer connection (SQLite has one writer anyway) and one reader, each
/// behind its own lock, so probes never wait for commits in WAL mode.
final class LedgerStore: Sendable {
    private let writer: Mutex<Database>
    let reader: Mutex<Database>
    private let lock: DatabaseLock
    let policy: LedgerPolicy

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
            let kind = Self.kind(of: error)
            let holder = kind == .databaseInUse ? " (another program holds a lock on it)" : ""
            throw LedgerError(kind, message: "database \(path): \(error)\(holder)")
        } catch {
            lock.release()
            throw error
        }
        self.policy = LedgerPolicy(flaws: flaws)
    }

    /// Write and open failures mean the file cannot be written, and a lock held past the busy timeout that
    /// another program holds it; anything else, that it is not a ledger database.
    static func kind(of error: SQLiteError) -> LedgerError.Kind {
        switch error.code & 0xff {
        case 3, 8, 10, 13, 14: .databaseNotWritable  // SQLITE_PERM, READONLY, IOERR, FULL, CANTOPEN
        case 5, 6: .databaseInUse  // SQLITE_BUSY, SQLITE_LOCKED
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

    /// Records a device report; grants only when the policy says so (never in the correct ledger).
    func record(_ report: ReceivedDeviceReport, now: Int64) throws -> ApplyOutcome {
        try writer.withLock { database in
            try database.transaction {
                try database.query(
                    "INSERT INTO reports (app_account_token, product_id, purchase_result, received_at) VALUES (?, ?, ?, ?)",
                    [
                        .text(report.appAccountToken), .text(report.productId), .text(report.purchaseResult),
                        .integer(now),
                    ]
                )
                guard let transactionId = policy.reportGrant(report) else { return ApplyOutcome() }
                try database.query(
                    """
                    INSERT INTO transactions (transaction_id, original_transaction_id, app_account_token, product_id,
                        product_type, quantity, signed_date) VALUES (?, ?, ?, ?, ?, 1, ?)
                    """,
                    [
                        .text(transactionId), .text(transactionId), .text(report.appAccountToken),
                        .text(report.productId), .text(ProductType.nonConsumable.rawValue), .integer(now),
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

    /// Applies one event: records its notification (a replay is a duplicate), stores the newest view of its
    /// transaction, grants it once unless it is revoked, and moves its subscription.
    private func apply(_ event: LedgerEvent, now: Int64, in database: Database) throws -> ApplyOutcome {
        if let uuid = event.notificationUUID, try !recordNotification(uuid, of: event, now: now, in: database) {
            // `double-refund`: the refund's bookkeeping ran before the duplicate check.
            if policy.booksEveryRefundDelivery, let signed = event.transaction,
                let view = TransactionView(signed, of: event),
                let date = policy.revocation(
                    carried: signed.revocationDate ?? (event.isRevoking ? event.signedDate : nil)
                )
            {
                try recordRefund(view.transactionId, token: view.token, revocationDate: date, now: now, in: database)
            }
            return ApplyOutcome(duplicate: true)
        }
        guard let signed = event.transaction, !policy.ignores(event) else { return ApplyOutcome() }
        let transaction = try policy.refundTarget(signed, revoking: event.revokes(signed)) {
            try latestOfProduct(signed, in: database)
        }
        guard let view = TransactionView(transaction, of: event) else { return ApplyOutcome() }
        let stored = try store(view, transaction, of: event, in: database)
        if stored.revoked, let date = stored.revocationApplied {
            try recordRefund(view.transactionId, token: stored.owner, revocationDate: date, now: now, in: database)
        }

        var outcome = ApplyOutcome()
        if !stored.revoked {
            let granted = try insertGrant(
                key: policy.grantKey(
                    transactionId: view.transactionId,
                    source: event.source,
                    resurrected: stored.resurrected
                ),
                transactionId: view.transactionId,
                token: stored.owner,
                productId: view.productId,
                quantity: view.quantity,
                source: event.source.rawValue,
                now: now,
                in: database
            )
            if granted { outcome.granted += 1 }
        }
        if view.productType == .autoRenewableSubscription && transaction.isUpgraded != true {
            try applySubscription(event, transaction, view, now: now, in: database)
        }
        return outcome
    }

    /// Records a notification by its UUID; false when it is a replay the policy drops.
    private func recordNotification(
        _ uuid: String,
        of event: LedgerEvent,
        now: Int64,
        in database: Database
    ) throws -> Bool {
        try database.query(
            """
            INSERT OR IGNORE INTO notifications (notification_uuid, notification_type, subtype, signed_date,
                received_at) VALUES (?, ?, ?, ?, ?)
            """,
            [
                .text(uuid), .text(event.notificationType?.rawValue ?? ""), SQLValue(event.subtype?.rawValue),
                .integer(event.signedDate), .integer(now),
            ]
        )
        return database.changes == 1 || !policy.dropsReplayedNotifications
    }

    /// What storing a view of a transaction left: whether it is revoked, whether a refunded transaction came
    /// back (only by a flaw), and the account that owns it.
    private struct Stored {
        var revoked: Bool
        var resurrected: Bool
        var owner: String
        /// The revocation date of the refund this view carried, when the policy applied it.
        var revocationApplied: Int64? = nil
    }

    /// Stores the transaction's newest signed view (an older view never overrides it) and its revocation,
    /// which is ordered apart (see ``LedgerPolicy/revocation(_:after:isReversal:signedDate:)``).
    private func store(
        _ view: TransactionView,
        _ transaction: JWSTransactionDecodedPayload,
        of event: LedgerEvent,
        in database: Database
    ) throws -> Stored {
        let carried = transaction.revocationDate ?? (event.isRevoking ? event.signedDate : nil)
        let revocation = policy.revocation(carried: carried)
        let isReversal = event.notificationType == .refundReversed
        let existing = try database.query(
            """
            SELECT signed_date, revocation_date, revocation_signed_date, reversal_signed_date, app_account_token
            FROM transactions WHERE transaction_id = ?
            """,
            [.text(view.transactionId)]
        ).first
        guard let existing else {
            try insert(view, transaction, revocation: revocation, isReversal: isReversal, in: database)
            return Stored(
                revoked: revocation != nil,
                resurrected: false,
                owner: view.token,
                revocationApplied: revocation
            )
        }
        let stored = Revocation(date: existing[1].int, signed: existing[2].int, reversalSigned: existing[3].int)
        let (next, resurrected) = policy.revocation(
            stored,
            after: revocation,
            isReversal: isReversal,
            signedDate: view.signedDate
        )
        let replaces = policy.replaces(incoming: view.signedDate, stored: existing[0].int ?? 0)
        if replaces { try replace(view, transaction, in: database) }
        try database.query(
            """
            UPDATE transactions SET revocation_date = ?, revocation_signed_date = ?, reversal_signed_date = ?
            WHERE transaction_id = ?
            """,
            [SQLValue(next.date), SQLValue(next.signed), SQLValue(next.reversalSigned), .text(view.transactionId)]
        )
        let storedOwner = existing[4].string ?? view.token
        let owner = replaces && !view.token.isEmpty ? view.token : storedOwner
        return Stored(
            revoked: next.date != nil,
            resurrected: resurrected,
            owner: owner,
            revocationApplied: revocation.flatMap { next.date == nil ? nil : $0 }
        )
    }

    /// Overwrites a stored transaction with a newer signed view (its token only when the view has one).
    private func replace(
        _ view: TransactionView,
        _ transaction: JWSTransactionDecodedPayload,
        in database: Database
    ) throws {
        try database.query(
            """
            UPDATE transactions SET product_id = ?, product_type = ?, purchase_date = ?, expires_date = ?,
                quantity = ?, is_upgraded = ?, signed_date = ?,
                app_account_token = CASE WHEN ? = '' THEN app_account_token ELSE ? END
            WHERE transaction_id = ?
            """,
            [
                .text(view.productId), .text(view.productType.rawValue), SQLValue(transaction.purchaseDate),
                SQLValue(transaction.expiresDate), .integer(view.quantity),
                .integer(transaction.isUpgraded == true ? 1 : 0), .integer(view.signedDate), .text(view.token),
                .text(view.token), .text(view.transactionId),
            ]
        )
    }

    private func insert(
        _ view: TransactionView,
        _ transaction: JWSTransactionDecodedPayload,
        revocation: Int64?,
        isReversal: Bool,
        in database: Database
    ) throws {
        try database.query(
            """
            INSERT INTO transactions (transaction_id, original_transaction_id, app_account_token, product_id,
                product_type, purchase_date, expires_date, quantity, revocation_date, is_upgraded, signed_date,
                revocation_signed_date, reversal_signed_date)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(view.transactionId), .text(view.originalId), .text(view.token), .text(view.productId),
                .text(view.productType.rawValue), SQLValue(transaction.purchaseDate), SQLValue(transaction.expiresDate),
                .integer(view.quantity), SQLValue(revocation), .integer(transaction.isUpgraded == true ? 1 : 0),
                .integer(view.signedDate), revocation == nil ? .null : .integer(view.signedDate),
                isReversal ? .integer(view.signedDate) : .null,
            ]
        )
    }

    /// The account's latest stored transaction of the signed one's product (for a subscription, its current
    /// period), as the signed transaction with that one's identity and period; nil when there is none.
    private func latestOfProduct(
        _ signed: JWSTransactionDecodedPayload,
        in database: Database
    ) throws -> JWSTransactionDecodedPayload? {
        guard let token = signed.appAccountToken?.lowercased(), let productId = signed.productId else { return nil }
        let latest = try database.query(
            """
            SELECT transaction_id, original_transaction_id, purchase_date, expires_date, quantity FROM transactions
            WHERE app_account_token = ? AND product_id = ?
            ORDER BY COALESCE(expires_date, purchase_date, signed_date) DESC, rowid DESC LIMIT 1
            """,
            [.text(token), .text(productId)]
        ).first
        guard let latest, let id = latest[0].string else { return nil }
        var target = signed
        target.transactionId = id
        target.originalTransactionId = latest[1].string ?? id
        target.purchaseDate = latest[2].int
        target.expiresDate = latest[3].int
        target.quantity = latest[4].int.map { Int32($0) }
        return target
    }

    /// Books a refund of a transaction (once per key: see ``LedgerPolicy/refundKey(transactionId:revocationDate:)``).
    private func recordRefund(
        _ transactionId: String,
        token: String,
        revocationDate: Int64,
        now: Int64,
        in database: Database
    ) throws {
        try database.query(
            """
            INSERT OR IGNORE INTO refunds (refund_key, transaction_id, app_account_token, recorded_at)
            VALUES (?, ?, ?, ?)
            """,
            [
                .text(policy.refundKey(transactionId: transactionId, revocationDate: revocationDate)),
                .text(transactionId), .text(token), .integer(now),
            ]
        )
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
}
