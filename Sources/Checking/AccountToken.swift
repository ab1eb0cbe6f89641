/// How PayStorm compares `appAccountToken`s from outside (bulk lines, probe answers): UUIDs are case-insensitive,
/// and backends often store them lowercase while PayStorm mints them uppercase.
public enum AccountToken {
    /// The form tokens are compared in.
    public static func canonical(_ token: String) -> String { token.uppercased() }
}
