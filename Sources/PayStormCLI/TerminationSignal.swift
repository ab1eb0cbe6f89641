import Dispatch
import PayStorm

#if canImport(Glibc)
import Glibc
#endif

/// Serving commands (`ledger serve`, `pki ocsp`) block here until SIGTERM or SIGINT.
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

    /// Signals caught since `listen()`.
    final class Listener {
        private let done = DispatchSemaphore(value: 0)
        private let received = Received()
        private var sources: [any DispatchSourceSignal] = []

        fileprivate init() {
            for number in [SIGTERM, SIGINT] {
                // Ignored first so the default action cannot end the process; resuming the source then
                // installs libdispatch's own handler.
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { [received, done] in
                    received.set(number)
                    done.signal()
                }
                source.resume()
                sources.append(source)
            }
        }

        /// Waits for the first signal, then runs `shutdown`.
        /// - Returns: `.interrupted` after SIGINT, `.success` after SIGTERM.
        func wait(thenShutDown shutdown: () -> Void) -> ExitCode {
            done.wait()
            shutdown()
            for source in sources { source.cancel() }
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
