import Dispatch
import PayStorm

#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM, caught the one way every command catches them.
///
/// `run` and `load` stop their run and still write the partial report; serving commands
/// (`ledger serve`, `pki ocsp`) block here until a signal arrives.
enum TerminationSignal {
    /// Waits for SIGTERM or SIGINT, then runs `shutdown`.
    /// - Returns: `.interrupted` after SIGINT, `.success` after SIGTERM.
    static func wait(thenShutDown shutdown: () -> Void) -> ExitCode {
        listen().wait(thenShutDown: shutdown)
    }

    /// Starts catching SIGTERM and SIGINT now. A server calls it before it announces its address: a
    /// signal sent as soon as the address is read (a test, or a run stopping its embedded ledger at once)
    /// would otherwise be lost between the default action and the handler, and the wait never end.
    static func listen() -> Listener { Listener() }

    /// Calls `handler` with the signal's number on `queue` for each SIGINT or SIGTERM until the
    /// returned catcher is cancelled; meanwhile neither signal ends the process.
    static func handle(
        on queue: DispatchQueue = .global(),
        _ handler: @escaping @Sendable (Int32) -> Void
    ) -> Catcher {
        Catcher(queue: queue, handler: handler)
    }

    /// Catches SIGINT and SIGTERM until cancelled.
    final class Catcher {
        private var sources: [any DispatchSourceSignal] = []

        fileprivate init(queue: DispatchQueue, handler: @escaping @Sendable (Int32) -> Void) {
            for number in [SIGTERM, SIGINT] {
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
        /// - Parameter restoringDefaults: whether SIGINT and SIGTERM end the process again afterwards;
        ///   otherwise they stay ignored until it exits.
        func cancel(restoringDefaults: Bool = false) {
            for source in sources { source.cancel() }
            sources = []
            if restoringDefaults {
                signal(SIGINT, SIG_DFL)
                signal(SIGTERM, SIG_DFL)
            }
        }
    }

    /// Signals caught since `listen()`.
    final class Listener {
        private let done = DispatchSemaphore(value: 0)
        private let received = Received()
        private var catcher: Catcher?

        fileprivate init() {
            catcher = TerminationSignal.handle { [received, done] number in
                received.set(number)
                done.signal()
            }
        }

        /// Waits for the first signal, then runs `shutdown`.
        /// - Returns: `.interrupted` after SIGINT, `.success` after SIGTERM.
        func wait(thenShutDown shutdown: () -> Void) -> ExitCode {
            done.wait()
            shutdown()
            catcher?.cancel()
            return received.value == SIGINT ? .interrupted : .success
        }
    }

    private final class Received: @unchecked Sendable {
        // @unchecked: written once on the signal queue before the semaphore is signalled, read after the wait.
        private var number: Int32 = 0
        func set(_ value: Int32) { number = value }
        var value: Int32 { number }
    }
}
