/// The ledger's one schema, as versioned migrations. `PRAGMA user_version` records how many have run;
/// a new version appends a migration, it never edits an old one.
enum Schema {
    /// Migration `i` moves the database from version `i` to `i + 1`.
    static let migrations: [String] = [
        """
        CREATE TABLE notifications (
            notification_uuid TEXT PRIMARY KEY,
            notification_type TEXT NOT NULL,
            subtype TEXT,
            signed_date INTEGER NOT NULL,
            received_at INTEGER NOT NULL
        );
        -- One row per transaction: the newest signed view of it (by signed_date).
        CREATE TABLE transactions (
            transaction_id TEXT PRIMARY KEY,
            original_transaction_id TEXT NOT NULL,
            app_account_token TEXT NOT NULL,
            product_id TEXT NOT NULL,
            product_type TEXT NOT NULL,
            purchase_date INTEGER,
            expires_date INTEGER,
            quantity INTEGER NOT NULL,
            revocation_date INTEGER,
            is_upgraded INTEGER NOT NULL DEFAULT 0,
            signed_date INTEGER NOT NULL
        );
        CREATE INDEX transactions_by_account ON transactions (app_account_token);
        -- One row per credit. The unique grant_key is what makes a grant happen once.
        CREATE TABLE grants (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            grant_key TEXT NOT NULL UNIQUE,
            transaction_id TEXT NOT NULL,
            app_account_token TEXT NOT NULL,
            product_id TEXT NOT NULL,
            quantity INTEGER NOT NULL,
            source TEXT NOT NULL,
            granted_at INTEGER NOT NULL
        );
        CREATE INDEX grants_by_account ON grants (app_account_token);
        -- One row per subscription (original transaction): the newest signed state.
        CREATE TABLE subscriptions (
            original_transaction_id TEXT PRIMARY KEY,
            app_account_token TEXT NOT NULL,
            product_id TEXT NOT NULL,
            transaction_id TEXT NOT NULL,
            status INTEGER NOT NULL,
            expires_date INTEGER,
            grace_expires_date INTEGER,
            auto_renew_status INTEGER,
            signed_date INTEGER NOT NULL
        );
        CREATE INDEX subscriptions_by_account ON subscriptions (app_account_token);
        -- Device reports (pending, cancelled): recorded for analytics, never granted.
        CREATE TABLE reports (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            app_account_token TEXT NOT NULL,
            product_id TEXT NOT NULL,
            purchase_result TEXT NOT NULL,
            received_at INTEGER NOT NULL
        );
        """,
        // v2: revocation ordering kept apart from the newest view (sticky refunds, ordered reversals).
        """
        ALTER TABLE transactions ADD COLUMN revocation_signed_date INTEGER;
        ALTER TABLE transactions ADD COLUMN reversal_signed_date INTEGER;
        UPDATE transactions SET revocation_signed_date = signed_date WHERE revocation_date IS NOT NULL;
        """,
        // v3: grants by transaction. The probe joins an account's transactions to their grants; without this
        // index every probe scanned the whole grants table, so probing 5,000 accounts after a long soak
        // (a 314 MB database) took over 10 minutes.
        """
        CREATE INDEX grants_by_transaction ON grants (transaction_id);
        """,
        // v4: one row per refund applied (a copy of one is the same row, by its key), for the probe's `refunds`;
        // the refunds a database already holds are the revoked transactions'.
        """
        CREATE TABLE refunds (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            refund_key TEXT NOT NULL UNIQUE,
            transaction_id TEXT NOT NULL,
            app_account_token TEXT NOT NULL,
            recorded_at INTEGER NOT NULL
        );
        CREATE INDEX refunds_by_account ON refunds (app_account_token);
        INSERT INTO refunds (refund_key, transaction_id, app_account_token, recorded_at)
            SELECT transaction_id || ':' || revocation_date, transaction_id, app_account_token, signed_date
            FROM transactions WHERE revocation_date IS NOT NULL;
        """,
    ]

    /// The tables the migrations create, read from their `CREATE TABLE` statements.
    static let ownTables: Set<String> = Set(
        migrations.flatMap { migration in
            migration.split(separator: "CREATE TABLE ", omittingEmptySubsequences: false).dropFirst().compactMap {
                rest in
                rest.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "_") }).first.map(String.init)
            }
        }
    )

    /// Refuses a database that holds tables the ledger does not make: someone else's database, which the
    /// migrations would otherwise extend with the ledger's tables and serve.
    /// - Throws: `SQLiteError` naming the tables.
    static func refuseForeignTables(_ database: Database) throws {
        let tables = try database.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        ).compactMap { $0.first?.string }
        let foreign = Set(tables).subtracting(ownTables).sorted()
        guard foreign.isEmpty else {
            throw SQLiteError(
                code: 0,
                operation: "open",
                message: "not a PayStorm ledger database: it holds table\(foreign.count == 1 ? "" : "s") "
                    + "\(foreign.joined(separator: ", ")), which the ledger does not make; give the ledger a file of its own"
            )
        }
    }

    /// The version a fully migrated database has.
    static var currentVersion: Int { migrations.count }

    /// Sets the durability pragmas and runs the missing migrations, each in its own transaction.
    /// - Throws: `SQLiteError`, or when the file is newer than this program.
    static func prepare(_ database: Database) throws {
        try database.execute("PRAGMA busy_timeout = 5000")
        try database.execute("PRAGMA journal_mode = WAL")
        try database.execute("PRAGMA synchronous = FULL")
        try database.execute("PRAGMA foreign_keys = ON")
        // Every delivery touches a leaf of each of a dozen indexes at random (UUID and id keys); with
        // SQLite's default 2 MiB cache most of them were read back with a `pread` per page once the file
        // outgrew it. 16 MiB keeps a soak's hot index pages in memory; durability is the WAL's, unchanged.
        try database.execute("PRAGMA cache_size = -16384")
        // A checkpoint copies each page of the WAL once, however many commits rewrote it. Every 4,000 frames
        // instead of SQLite's 1,000 (a WAL of up to 16 MiB), the pages every commit rewrites (the rightmost
        // leaves, the header) are copied a quarter as often. Commits stay `synchronous = FULL` on the WAL.
        try database.execute("PRAGMA wal_autocheckpoint = 4000")
        try database.transaction {
            try refuseForeignTables(database)
            let version = Int(try database.query("PRAGMA user_version").first?.first?.int ?? 0)
            guard version <= currentVersion else {
                throw SQLiteError(
                    code: 0,
                    operation: "migrate",
                    message: "database schema version \(version) is newer than this ledger's \(currentVersion)"
                )
            }
            for index in version..<currentVersion {
                try database.execute(migrations[index])
                try database.execute("PRAGMA user_version = \(index + 1)")
            }
        }
    }
}

/// The probe's queries, one account each. Every one must find its rows through an index: the database
/// grows with the run, so a scan makes each probe slower than the last (`LedgerSchemaTests` reads their
/// query plans).
enum AccountQuery {
    /// Grants per transaction: `(transaction_id, count)`.
    static let grants =
        "SELECT transaction_id, COUNT(*) FROM grants WHERE app_account_token = ? GROUP BY transaction_id ORDER BY 1"

    /// Units of unrefunded consumables granted, per product: `(product_id, units)`.
    static let balances = """
        SELECT g.product_id, SUM(g.quantity) FROM grants g JOIN transactions t ON t.transaction_id = g.transaction_id
        WHERE g.app_account_token = ? AND t.product_type = ? AND t.revocation_date IS NULL GROUP BY g.product_id
        """

    /// Granted, unrevoked non-consumables and non-renewing subscriptions: `(product_id, transaction_id,
    /// expires_date)`.
    static let owned = """
        SELECT DISTINCT t.product_id, t.transaction_id, t.expires_date FROM transactions t
        JOIN grants g ON g.transaction_id = t.transaction_id
        WHERE t.app_account_token = ? AND t.product_type IN (?, ?) AND t.revocation_date IS NULL
        ORDER BY t.product_id, t.transaction_id
        """

    /// Refunds applied per transaction: `(transaction_id, count)`.
    static let refunds =
        "SELECT transaction_id, COUNT(*) FROM refunds WHERE app_account_token = ? GROUP BY transaction_id ORDER BY 1"

    /// The account's subscriptions, newest signed state each, and the revocation date of its current
    /// transaction: `(product_id, transaction_id, status, expires_date, grace_expires_date, revocation_date)`.
    static let subscriptions = """
        SELECT s.product_id, s.transaction_id, s.status, s.expires_date, s.grace_expires_date, t.revocation_date
        FROM subscriptions s LEFT JOIN transactions t ON t.transaction_id = s.transaction_id
        WHERE s.app_account_token = ? ORDER BY s.product_id
        """

    /// Every query of a probe.
    static let all = [grants, balances, owned, subscriptions, refunds]
}
