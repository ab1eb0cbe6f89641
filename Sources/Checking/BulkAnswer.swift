public import TargetContract

/// A bulk command's answer: the states it printed, looked up case-insensitively by `appAccountToken`.
public struct BulkAnswer: Sendable, Hashable {
    private var states: [String: AccountState]

    /// An answer from states keyed by token in any case (the last of two spellings of one token wins).
    public init(_ states: [String: AccountState] = [:]) {
        var canonical: [String: AccountState] = [:]
        for (token, state) in states { canonical[AccountToken.canonical(token)] = state }
        self.states = canonical
    }

    /// How many accounts the command printed.
    public var count: Int { states.count }

    /// The state printed for `account`, in any case, or nil.
    public subscript(account: String) -> AccountState? { states[AccountToken.canonical(account)] }

    /// The state printed for `account`.
    /// - Throws: ``ProbeError/missingAccount(_:)`` when the command printed no line for it: that account is
    ///   unknown, never "owns nothing" (a backend may print only accounts that own something, or be cut short).
    public func state(of account: String) throws(ProbeError) -> AccountState {
        guard let state = self[account] else { throw .missingAccount(account) }
        return state
    }
}
