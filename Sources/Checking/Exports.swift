// Re-exported (as swift-nio's umbrella module re-exports NIOCore): the checker's API speaks in the contract's
// AccountState (shared with the reference ledger that produces it), so its clients use it without importing
// the contract module themselves.
@_exported public import TargetContract
