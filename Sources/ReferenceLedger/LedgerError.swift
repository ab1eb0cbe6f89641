/// Why the ledger could not start (or could not go on).
public struct LedgerError: Error, Sendable, CustomStringConvertible {
    /// What kind of problem it is, so that a command can choose its exit code.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        /// The kind's name.
        public var description: String

        /// The configuration is wrong: an unusable trusted root, a database path that keeps nothing.
        public static let invalidConfiguration = Kind(description: "invalid configuration")
        /// The database file is not a database this ledger can read (corrupt, or another program's).
        public static let malformedDatabase = Kind(description: "malformed database")
        /// The database (or its directory, where SQLite keeps the WAL) cannot be written.
        public static let databaseNotWritable = Kind(description: "database not writable")
        /// Another ledger holds the database.
        public static let databaseInUse = Kind(description: "database in use")
    }

    /// What kind of problem it is.
    public var kind: Kind
    /// One line naming the problem.
    public var message: String

    /// Creates an error.
    /// - Parameters:
    ///   - kind: What kind of problem it is.
    ///   - message: One line naming the problem (the file, the field, the value).
    public init(_ kind: Kind = .invalidConfiguration, message: String) {
        self.kind = kind
        self.message = message
    }

    /// The line itself.
    public var description: String { message }
}
