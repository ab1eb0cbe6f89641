import Foundation
import PayStormTestKit
import Synchronization
import Testing

@testable import Load

#if canImport(Glibc)
import Glibc
import Primitives
#endif

/// A loopback listener that serves one connection (reading its requests, never answering) and then accepts no
/// more, with its accept queue kept full, so that every later connect hangs: the one way to make requests time
/// out before they reach a connection, deterministically.
final class SaturatedListener: Sendable {
    let port: UInt16
    private let listener: Int32
    private let fillers: Mutex<[Int32]> = Mutex([])
    /// Requests (`\r\n\r\n`-terminated heads) read on the one connection.
    let requests = Atomic<Int>(0)

    init() throws {
        (listener, port) = try listenOnLoopback(backlog: 1)
        let thread = Thread { self.serveOne() }
        thread.start()
    }

    private func serveOne() {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        fillQueue()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var pending: [UInt8] = []
        while true {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { break }
            pending += buffer[0..<count]
            while let end = pending.indices.dropLast(3).first(where: { pending[$0...].starts(with: [13, 10, 13, 10]) })
            {
                requests.add(1, ordering: .relaxed)
                pending.removeFirst(end + 4)
            }
        }
        close(connection)
    }

    /// Connects until the accept queue is full, so the kernel drops further SYNs.
    private func fillQueue() {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        for _ in 0..<4 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            fillers.withLock { $0.append(fd) }
        }
        usleep(50_000)
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        fillers.withLock { for fd in $0 { close(fd) } }
    }
}

/// "Sent" means on a connection: a request whose timeout ran out while it waited for one, or in its connect,
/// is `unsent`, counted apart, and never among the requests the target may have read.
struct UnsentTests {
    @Test(arguments: TransportTests.paths)
    func requestsThatNeverReachedAConnectionAreUnsent(libcurlTransfers: Bool) throws {
        let listener = try SaturatedListener()
        defer { listener.stop() }
        let url = "http://127.0.0.1:\(listener.port)/"
        let configuration = LoadEngineConfiguration(
            connectionsPerHost: 1,
            connectTimeout: .seconds(2),
            totalTimeout: .milliseconds(300),
            libcurlTransfers: libcurlTransfers
        )
        let engine = try LoadEngine(configuration)
        var counts = RequestCounts()
        var results: [LoadResult] = []
        _ = engine.run(.open(RateSchedule.constant(50, for: .milliseconds(200)))) { index, _ in
            index < 10 ? LoadRequest(id: index, kind: "test", url: url) : nil
        } sink: { result in
            results.append(result)
            counts.add(result, succeeded: result.isSuccess)
        }
        #expect(results.count == 10)
        // The first went out on the one connection and timed out there; the target read it.
        #expect(counts.sent == listener.requests.load(ordering: .relaxed), "\(results.map(\.error))")
        #expect(counts.sent >= 1)
        #expect(counts.unsent == 10 - counts.sent && counts.unsent >= 5, "\(results.map(\.error))")
        #expect(counts.errors["unsent"] == counts.unsent)
        // Unsent requests are failures all the same: the error rate covers them.
        #expect(counts.failed == 10 && counts.errorRate == 1)
        for result in results where result.error == .unsent {
            #expect(result.error?.neverSent == true)
            #expect(result.wireStart == result.received)
        }
    }

    @Test func aTimeoutOnTheWireStaysATimeout() {
        #expect(LoadErrorClass.timeout.unlessNeverOnTheWire(true) == .timeout)
        #expect(LoadErrorClass.timeout.unlessNeverOnTheWire(false) == .unsent)
        #expect(LoadErrorClass.reset.unlessNeverOnTheWire(false) == .reset)
    }
}
