import Testing

@testable import Load

#if canImport(Glibc)
import Glibc
#endif

struct TransportTimerTests {
    /// The engine's loop waits for the same next release over several passes while answers keep arriving; the timer
    /// used to be set again on every pass, a system call per pass for the same time.
    @Test func aWaitForTheSameTimeLeavesTheTimerSetAndItStillFiresOnTime() throws {
        let configuration = LoadEngineConfiguration()
        _ = try LoadEngine(configuration)  // libcurl's global set-up
        let transport = try Transport(configuration)
        var pipe: [Int32] = [0, 0]
        try #require(Glibc.pipe(&pipe) == 0)
        defer { for descriptor in pipe { close(descriptor) } }
        transport.watch(wake: pipe[0])
        let release = monotonicNanoseconds() + 4_000_000
        // Woken before the release by something else (an answer): the timer is set once for it (not at all on a
        // machine so busy that the release passed before the first wait).
        for _ in 0..<3 {
            var byte: UInt8 = 1
            _ = write(pipe[1], &byte, 1)
            transport.wait(until: release)
            #expect(transport.woken)
            transport.woken = false
        }
        #expect(transport.timerSets <= 1)
        // Nothing else happens: the wait ends at the release, not before.
        transport.wait(until: release)
        #expect(monotonicNanoseconds() >= release)
        #expect(!transport.woken)
        #expect(transport.timerSets <= 1)
    }
}
