import Foundation
import Testing

@testable import ReferenceLedger

/// The schema at soak scale: every probe query reads through an index, and older databases migrate to it.
struct LedgerSchemaTests {
    /// Runs `body` with the path of a database file in a fresh directory, removed afterwards.
    private static func withDatabasePath(_ body: (String) throws -> Void) throws {
        let directory = NSTemporaryDirectory() + "ledger-schema-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(directory + "/l.sqlite")
    }

    /// A database file as another ledger version left it: `prepare` runs on it, then it is closed.
    private static func makeDatabase(_ path: String, _ prepare: (Database) throws -> Void) throws {
        let database = try Database(path: path)
        defer { database.close() }
        try prepare(database)
    }

    /// The plan's lines (`SCAN …`, `SEARCH … USING INDEX …`) for a query with every parameter bound.
    private static func plan(of query: String, in database: Database) throws -> [String] {
        let parameters = query.filter { $0 == "?" }.count
        let rows = try database.query(
            "EXPLAIN QUERY PLAN " + query,
            Array(repeating: .text("x"), count: parameters)
        )
        return rows.compactMap { $0.last?.string }
    }

    // A scan (or an index SQLite builds for the one query) reads the whole table: each probe then costs as
    // much as the database is large, and the final probe of a long soak takes minutes.
    @Test(arguments: AccountQuery.all)
    func readsAnAccountThroughIndexesOnly(_ query: String) throws {
        try Self.withDatabasePath { path in
            let store = try LedgerStore(path: path, flaws: [])
            defer { store.close() }
            let database = try Database(path: path)
            defer { database.close() }
            let plan = try Self.plan(of: query, in: database)
            #expect(!plan.isEmpty)
            for line in plan {
                #expect(!line.hasPrefix("SCAN"), "\(line) in: \(query)")
                #expect(!line.contains("AUTOMATIC"), "\(line) in: \(query)")
            }
        }
    }

    @Test func migratesAVersionTwoDatabaseAndIndexesItsGrants() throws {
        try Self.withDatabasePath { path in
            try Self.makeDatabase(path) { database in
                for migration in Schema.migrations.prefix(2) { try database.execute(migration) }
                try database.execute("PRAGMA user_version = 2")
                try database.execute(
                    """
                    INSERT INTO grants (grant_key, transaction_id, app_account_token, product_id, quantity, source,
                        granted_at) VALUES ('k1', 't1', 'a', 'p', 1, 'webhook', 5)
                    """
                )
            }
            let store = try LedgerStore(path: path, flaws: [])
            defer { store.close() }
            #expect(store.schemaVersion == Schema.currentVersion)
            let database = try Database(path: path)
            defer { database.close() }
            let indexes = try database.query(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'grants'"
            )
            #expect(indexes.contains { $0.first?.string == "grants_by_transaction" })
            #expect(try database.query("SELECT COUNT(*) FROM grants").first?.first?.int == 1)
        }
    }

    @Test func refusesADatabaseFromANewerLedger() throws {
        try Self.withDatabasePath { path in
            try Self.makeDatabase(path) { try $0.execute("PRAGMA user_version = \(Schema.currentVersion + 1)") }
            let error = #expect(throws: LedgerError.self) { try LedgerStore(path: path, flaws: []) }
            #expect(error.map { "\($0)" }?.contains("newer than this ledger's \(Schema.currentVersion)") == true)
        }
    }

    @Test func knowsEveryTableItsMigrationsMake() throws {
        try Self.withDatabasePath { path in
            let store = try LedgerStore(path: path, flaws: [])
            store.close()
            let database = try Database(path: path)
            defer { database.close() }
            let tables = try database.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
            ).compactMap { $0.first?.string }
            #expect(Set(tables) == Schema.ownTables)
            // And reopens its own database.
            try LedgerStore(path: path, flaws: []).close()
        }
    }

    @Test func refusesSomeoneElsesDatabaseWithoutAddingTables() throws {
        try Self.withDatabasePath { path in
            try Self.makeDatabase(path) { database in
                try database.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)")
                try database.execute("CREATE TABLE users (id INTEGER PRIMARY KEY)")
            }
            let error = #expect(throws: LedgerError.self) { try LedgerStore(path: path, flaws: []) }
            #expect(error?.kind == .malformedDatabase)
            #expect(
                error.map { "\($0)" }?.contains("holds tables accounts, users") == true,
                "\(String(describing: error))"
            )
            let database = try Database(path: path)
            defer { database.close() }
            let tables = try database.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            #expect(tables.compactMap { $0.first?.string } == ["accounts", "users"])
        }
    }

    @Test func aDatabaseLockedByAnotherProgramIsInUse() throws {
        try Self.withDatabasePath { path in
            try Self.makeDatabase(path) { _ in }
            let holder = try Database(path: path)
            defer { holder.close() }
            try holder.execute("BEGIN EXCLUSIVE")
            defer { try? holder.execute("ROLLBACK") }
            // SQLite waits its busy timeout (5 s) for the lock, then the ledger refuses: in use, not malformed.
            let error = #expect(throws: LedgerError.self) { try LedgerStore(path: path, flaws: []) }
            #expect(error?.kind == .databaseInUse, "\(String(describing: error))")
            #expect(error.map { "\($0)" }?.contains("another program holds a lock on it") == true)
        }
    }
}
