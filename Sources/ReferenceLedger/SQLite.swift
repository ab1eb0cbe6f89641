internal import CPayStormShims
internal import CSQLite

/// A SQLite failure, with the result code and the operation that failed.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The SQLite result code (extended when available).
    public var code: Int32
    /// What was being done, such as `open` or `prepare`.
    public var operation: String
    /// SQLite's own message.
    public var message: String

    /// One line for logs and the command line.
    public var description: String { "sqlite \(operation) failed (\(code)): \(message)" }
}

/// A value bound to or read from a statement.
enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
}

/// One SQLite connection. Not thread-safe by itself: the ledger confines each connection to a `Mutex`.
final class Database {
    /// Nil once closed; every later use throws.
    private var handle: OpaquePointer?
    private var cache: [String: Statement] = [:]

    /// Opens (creating if needed) the database file.
    /// - Throws: `SQLiteError` when the file cannot be opened.
    init(path: String) throws {
        var pointer: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let result = sqlite3_open_v2(path, &pointer, flags, nil)
        guard result == SQLITE_OK, let pointer else {
            let message = pointer.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(pointer)
            throw SQLiteError(code: result, operation: "open \(path)", message: message)
        }
        handle = pointer
        sqlite3_extended_result_codes(pointer, 1)
    }

    deinit {
        close()
    }

    /// Finalizes the cached statements and closes the connection; safe to call twice. Closing the last
    /// connection to a WAL database checkpoints it and removes its `-wal` and `-shm` files.
    func close() {
        cache.removeAll()
        sqlite3_close_v2(handle)
        handle = nil
    }

    /// The open handle, or an error naming the operation once closed.
    private func open(for operation: String) throws -> OpaquePointer {
        guard let handle else {
            throw SQLiteError(code: SQLITE_MISUSE, operation: operation, message: "the database is closed")
        }
        return handle
    }

    /// Runs one or more statements without results (pragmas, schema, BEGIN/COMMIT).
    func execute(_ sql: String) throws {
        let handle = try open(for: "execute")
        var error: UnsafeMutablePointer<CChar>?
        let result = sqlite3_exec(handle, sql, nil, nil, &error)
        if result != SQLITE_OK {
            let message = error.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(error)
            throw SQLiteError(code: result, operation: "execute", message: message)
        }
    }

    /// A prepared statement for `sql`, cached for reuse on this connection.
    func statement(_ sql: String) throws -> Statement {
        if let cached = cache[sql] {
            cached.reset()
            return cached
        }
        let statement = try Statement(database: open(for: "prepare"), sql: sql)
        cache[sql] = statement
        return statement
    }

    /// Runs one statement with bindings and returns its rows.
    @discardableResult
    func query(_ sql: String, _ values: [SQLValue] = []) throws -> [[SQLValue]] {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        var rows: [[SQLValue]] = []
        while try statement.step() {
            rows.append(statement.row())
        }
        return rows
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// Runs `body` inside `BEGIN IMMEDIATE` … `COMMIT`, rolling back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}

/// One prepared statement.
final class Statement {
    private let handle: OpaquePointer
    private let database: OpaquePointer

    init(database: OpaquePointer, sql: String) throws {
        var pointer: OpaquePointer?
        let result = sqlite3_prepare_v2(database, sql, -1, &pointer, nil)
        guard result == SQLITE_OK, let pointer else {
            throw SQLiteError(code: result, operation: "prepare", message: String(cString: sqlite3_errmsg(database)))
        }
        self.handle = pointer
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func bind(_ values: [SQLValue]) throws {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .null: result = sqlite3_bind_null(handle, index)
            case .integer(let number): result = sqlite3_bind_int64(handle, index, number)
            case .text(let text):
                result = text.withCString { ps_sqlite3_bind_text_transient(handle, index, $0, -1) }
            }
            guard result == SQLITE_OK else {
                throw SQLiteError(code: result, operation: "bind", message: String(cString: sqlite3_errmsg(database)))
            }
        }
    }

    /// Advances; true while a row is available.
    func step() throws -> Bool {
        let result = sqlite3_step(handle)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            throw SQLiteError(code: result, operation: "step", message: String(cString: sqlite3_errmsg(database)))
        }
    }

    func row() -> [SQLValue] {
        (0..<sqlite3_column_count(handle)).map { column in
            switch sqlite3_column_type(handle, column) {
            case SQLITE_NULL: return .null
            case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
            default:
                guard let text = sqlite3_column_text(handle, column) else { return .null }
                return .text(String(cString: text))
            }
        }
    }
}

extension SQLValue {
    var int: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    var string: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    init(_ value: String?) {
        self = value.map { .text($0) } ?? .null
    }

    init(_ value: Int64?) {
        self = value.map { .integer($0) } ?? .null
    }
}
