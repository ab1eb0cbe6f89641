/// Work that a signal stops early: a run, or a command's ``Interruption``. The command line interrupts it at the
/// first signal and abandons it at the second.
public protocol Interruptible: Sendable {
    /// Stops the work: every wait ends within moments and what was decided by then is still reported. Only the
    /// first call counts; callable from any thread.
    func interrupt(_ signal: StopSignal)
    /// Kills the child processes the work is waiting on, for a command about to exit at once without unwinding.
    func abandon()
    /// The signal that stopped the work, nil while it runs on.
    var signal: StopSignal? { get }
}

extension Interruption: Interruptible {}
