import Profile
import RunControl
import Simulation

/// The namespace of a run's identities: account tokens and transaction IDs derive from the seed and it
/// (`Profile.namespace`), everything else from the seed alone.
///
/// A target that keeps its state (a staging backend, the example backend, a ledger served apart) still holds a
/// run's purchases when the next run starts. Were identities the seed's alone, a nightly run of a profile's seed
/// would deliver again the transactions of the night before, to the same accounts, and read what they left as
/// double grants and unlocks without a purchase. So each such run draws a fresh namespace; the seed still
/// decides what every account does, and the report and each replay line name the namespace.
public enum RunNamespace {
    /// A fresh namespace: 64 bits from the system, never 0 (the seed's own identities).
    public static func fresh() -> UInt64 {
        var system = SystemRandomNumberGenerator()
        return UInt64.random(in: 1...UInt64.max, using: &system)
    }

    /// How reports and command lines write a namespace: 16 lowercase hex digits.
    public static func text(_ namespace: UInt64) -> String {
        let digits = String(namespace, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Reads a namespace as ``text(_:)`` writes it (1 to 16 hex digits, not 0), or nil.
    public static func parse(_ text: String) -> UInt64? {
        guard (1...16).contains(text.count), let value = UInt64(text, radix: 16), value != 0 else { return nil }
        return value
    }

    /// The token `options.account` plays under in the run's namespace: the account with the same index in
    /// the namespace it was named in (`accountNamespace`, else the run's own).
    /// - Throws: `RunError.badInput` when the token is none of the seed's accounts in that namespace.
    static func account(_ options: RunOptions, profile: Profile) throws(RunError) -> String? {
        guard let token = options.account else { return nil }
        let named = options.accountNamespace ?? profile.namespace
        guard
            let index = World.account(
                of: token,
                seed: profile.seed,
                namespace: named,
                accounts: profile.population.accounts
            )
        else {
            let namespace = named == 0 ? "" : " in namespace \(text(named))"
            // A witness names an account by the token the backend dictated; the replay line, by the minted one.
            let dictated =
                profile.target.accounts?.provision == nil
                ? ""
                : "; an account whose token provisioning dictated (dictatedToken) is named by the token it was "
                    + "given, as the violation's replay line names it"
            throw .badInput(
                "--account \(token) is not one of the \(profile.population.accounts) accounts of seed \(profile.seed)"
                    + "\(namespace); a replay line names the seed and, for a target that keeps its state, the "
                    + "namespace (--namespace) of the run it replays\(dictated)"
            )
        }
        return World.appAccountToken(seed: profile.seed, namespace: profile.namespace, account: index)
    }
}
