import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// Serving commands (`ledger serve`, `pki ocsp`) block here until SIGTERM or SIGINT.
enum TerminationSignal {
    /// Waits for SIGTERM or SIGINT, then runs `shutdown`.
    /// - Returns: `.interrupted` after SIGINT, `.success` after SIGTERM.
    static func wait(thenShutDown shutdown: () -> Void) -> ExitCode {
        let done = DispatchSemaphore(value: 0)
        let received = Received()
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                received.set(number)
                done.signal()
            }
            source.resume()
            sources.append(source)
        }
        done.wait()
        shutdown()
        for source in sources { source.cancel() }
        return received.value == SIGINT ? .interrupted : .success
    }

    private final class Received: @unchecked Sendable {
        // @unchecked: written once on the signal queue before the semaphore is signalled, read after the wait.
        private var number: Int32 = 0
        func set(_ value: Int32) { number = value }
        var value: Int32 { number }
    }
}
