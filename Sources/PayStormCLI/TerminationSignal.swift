import Dispatch
import PayStorm
import RunControl
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT, SIGTERM and SIGHUP, caught the one way every command catches them.
///
/// `run`, `replay`, `detect`, `capacity`, `target check` and `load` stop their work and still write the partial
/// report; serving commands (`ledger serve`, `pki ocsp`, `api serve`) block here until a signal arrives.
enum TerminationSignal {
    /// The signals caught.
    static let numbers = [SIGTERM, SIGINT, SIGHUP]

    /// Waits for SIGTERM, SIGINT or SIGHUP, then runs `shutdown`.
    /// - Returns: `.success` after SIGTERM (a server's normal stop), else the signal's exit code.
    static func wait(thenShutDown shutdown: () -> Void) -> ExitCode {
        listen().wait(thenShutDown: shutdown)
    }

    /// Starts catching the signals now. A server calls it before it announces its address: a signal sent as soon
    /// as the address is read (a test, or a run stopping its embedded ledger at once) would otherwise be lost
    /// between the default action and the handler, and the wait never end.
    static func listen() -> Listener { Listener() }

    /// Calls `handler` with the signal's number on `queue` for each SIGINT, SIGTERM or SIGHUP until the returned
    /// catcher is cancelled; meanwhile none of them ends the process.
    static func handle(
        on queue: DispatchQueue = .global(),
        _ handler: @escaping @Sendable (Int32) -> Void
    ) -> Catcher {
        Catcher(queue: queue, handler: handler)
    }

    /// Interrupts `interruption` (a run, or a command's ``Interruption``) at the first signal, so the command stops
    /// and writes its report; a second signal kills the children the command is waiting on and exits at once with
    /// the first signal's code.
    static func interrupting(_ interruption: some Interruptible) -> Catcher {
        let caught = Caught()
        return handle { number in
            guard let signal = StopSignal(number: number) else { return }
            if caught.count.add(1, ordering: .relaxed).newValue == 1 {
                interruption.interrupt(signal)
            } else {
                interruption.abandon()
                _exit((interruption.signal ?? signal).exitCode.rawValue)
            }
        }
    }

    /// What the handlers caught: how many signals, and the last one's number.
    private final class Caught: Sendable {
        let count = Atomic<Int>(0)
        let number = Atomic<Int32>(0)
    }

    /// Catches SIGINT, SIGTERM and SIGHUP until cancelled.
    final class Catcher {
        private var sources: [any DispatchSourceSignal] = []

        fileprivate init(queue: DispatchQueue, handler: @escaping @Sendable (Int32) -> Void) {
            for number in TerminationSignal.numbers {
                // Ignored first so the default action cannot end the process; resuming the source then
                // installs libdispatch's own handler.
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler { handler(number) }
                source.resume()
                sources.append(source)
            }
        }

        /// Stops calling the handler.
        /// - Parameter restoringDefaults: whether the signals end the process again afterwards; otherwise they
        ///   stay ignored until it exits.
        func cancel(restoringDefaults: Bool = false) {
            for source in sources { source.cancel() }
            sources = []
            if restoringDefaults {
                for number in TerminationSignal.numbers { signal(number, SIG_DFL) }
            }
        }
    }

    /// Signals caught since `listen()`.
    final class Listener {
        private let done = DispatchSemaphore(value: 0)
        private let caught = Caught()
        private var catcher: Catcher?

        fileprivate init() {
            catcher = TerminationSignal.handle { [caught, done] number in
                caught.number.store(number, ordering: .relaxed)
                done.signal()
            }
        }

        /// Ends the wait as SIGTERM would (a server whose parent went away); callable from any thread.
        var stop: @Sendable () -> Void {
            { [caught, done] in
                caught.number.store(SIGTERM, ordering: .relaxed)
                done.signal()
            }
        }

        /// Waits for the first signal (or ``stop``), then runs `shutdown`.
        /// - Returns: `.success` after SIGTERM, else the signal's exit code.
        func wait(thenShutDown shutdown: () -> Void) -> ExitCode {
            done.wait()
            shutdown()
            catcher?.cancel()
            let number = caught.number.load(ordering: .relaxed)
            guard number != SIGTERM, let signal = StopSignal(number: number) else { return .success }
            return signal.exitCode
        }
    }
}
