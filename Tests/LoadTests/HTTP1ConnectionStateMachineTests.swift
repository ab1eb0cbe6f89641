import Testing

@testable import Load

/// The fast path's connection state machine, driven without sockets.
struct HTTP1ConnectionStateMachineTests {
    typealias Machine = HTTP1ConnectionStateMachine

    static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"

    /// A machine connected and idle.
    func idle() -> Machine {
        var machine = Machine()
        machine.connect()
        #expect(machine.state == .connecting)
        #expect(machine.connected() == .ready)
        #expect(machine.state == .idle)
        return machine
    }

    /// A machine whose request of `total` bytes was written whole.
    func receiving(total: Int = 10, hangUp: Bool = false, served: Int = 0) -> Machine {
        var machine = idle()
        for _ in 0..<served {
            _ = machine.start(total: 1, resetAfter: nil, hangUpOnResponse: false, expectsBody: true)
            _ = machine.wrote(1)
            _ = feed(&machine, Self.ok)
        }
        #expect(
            machine.start(total: total, resetAfter: nil, hangUpOnResponse: hangUp, expectsBody: true)
                == .write(from: 0, to: total)
        )
        #expect(machine.wrote(total) == .awaitResponse)
        return machine
    }

    /// Feeds `text` and returns the action and the body bytes handed over.
    func feed(_ machine: inout Machine, _ text: String) -> (action: Machine.Action, body: String) {
        var body: [UInt8] = []
        let bytes = Array(text.utf8)
        let action = bytes.withUnsafeBytes { buffer in machine.read(buffer) { body.append(contentsOf: $0) } }
        return (action, String(decoding: body, as: UTF8.self))
    }

    @Test func writesPartiallyWaitsForWritabilityThenAwaitsTheResponse() {
        var machine = idle()
        #expect(
            machine.start(total: 100, resetAfter: nil, hangUpOnResponse: false, expectsBody: true)
                == .write(from: 0, to: 100)
        )
        #expect(machine.wrote(30) == .write(from: 30, to: 100))
        #expect(machine.writeBlocked() == .awaitWritable)
        #expect(machine.state == .sending(sent: 30, end: 100))
        #expect(machine.writable() == .write(from: 30, to: 100))
        #expect(machine.wrote(70) == .awaitResponse)
        #expect(machine.state == .receiving)
    }

    @Test func aResponseInPiecesCompletesAndKeepsTheConnection() {
        var machine = receiving()
        let first = feed(&machine, "HTTP/1.1 200 OK\r\nContent-")
        #expect(first.action == .wait)
        let second = feed(&machine, "Length: 5\r\n\r\nhel")
        #expect(second.action == .wait && second.body == "hel")
        let third = feed(&machine, "lo")
        #expect(third.action == .complete(keepAlive: true) && third.body == "lo")
        #expect(machine.state == .idle)
        #expect(machine.served == 1)
        #expect(machine.parser.status == 200)
    }

    @Test func connectionCloseInTheResponseClosesIt() {
        var machine = receiving()
        let (action, _) = feed(&machine, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
        #expect(action == .complete(keepAlive: false))
        #expect(machine.state == .closed)
    }

    @Test func aBodyFramedByTheCloseEndsAtTheClose() {
        var machine = receiving()
        #expect(feed(&machine, "HTTP/1.1 200 OK\r\n\r\npart").action == .wait)
        #expect(machine.peerClosed() == .complete(keepAlive: false))
        #expect(machine.state == .closed)
    }

    @Test func anAnswerBeforeTheWholeRequestIsWrittenClosesTheConnection() {
        var machine = idle()
        _ = machine.start(total: 100, resetAfter: nil, hangUpOnResponse: false, expectsBody: true)
        _ = machine.wrote(10)
        let (action, _) = feed(&machine, "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\n\r\n")
        // The rest of the request would be read as a new one: never kept.
        #expect(action == .complete(keepAlive: false))
    }

    @Test(arguments: [0, 1])
    func aServerClosingBeforeAnyAnswerRetriesOnlyOnAReusedConnection(served: Int) {
        var machine = receiving(served: served)
        let action = machine.peerClosed()
        #expect(
            action == .fail(.reset, detail: "the server closed the connection without answering", retry: served > 0)
        )
        #expect(machine.state == .closed)
    }

    @Test func aServerClosingMidResponseFailsWithoutRetry() {
        var machine = receiving(served: 1)
        _ = feed(&machine, "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort")
        #expect(
            machine.peerClosed()
                == .fail(.reset, detail: "the server closed the connection in the middle of the response", retry: false)
        )
    }

    @Test(arguments: [(true, 1, true), (true, 0, false), (false, 1, false)] as [(Bool, Int, Bool)])
    func writeAndReadErrorsRetryOnlyWhenThePeerResetAReusedConnection(reset: Bool, served: Int, retry: Bool) {
        var writing = idle()
        for _ in 0..<served {
            _ = writing.start(total: 1, resetAfter: nil, hangUpOnResponse: false, expectsBody: true)
            _ = writing.wrote(1)
            _ = feed(&writing, Self.ok)
        }
        _ = writing.start(total: 10, resetAfter: nil, hangUpOnResponse: false, expectsBody: true)
        #expect(
            writing.writeFailed("Broken pipe", retryable: reset) == .fail(.reset, detail: "Broken pipe", retry: retry)
        )
        var reading = receiving(served: served)
        #expect(reading.readFailed("reset", resetByPeer: reset) == .fail(.reset, detail: "reset", retry: retry))
        #expect(writing.state == .closed && reading.state == .closed)
    }

    @Test func aTimeoutFailsTheRequestAndClosesOnlyWhenBusy() {
        var busy = receiving()
        #expect(busy.timedOut("too slow") == .fail(.timeout, detail: "too slow", retry: false))
        #expect(busy.state == .closed)
        var quiet = idle()
        #expect(quiet.timedOut("too slow") == .wait)
        #expect(quiet.state == .idle)
    }

    @Test func aResetFaultCutsTheRequestAfterItsBytes() {
        var machine = idle()
        #expect(
            machine.start(total: 100, resetAfter: 40, hangUpOnResponse: false, expectsBody: true)
                == .write(from: 0, to: 40)
        )
        #expect(machine.wrote(40) == .reset(after: 40))
        #expect(machine.state == .closed)
    }

    @Test func aLostResponseFaultHangsUpAtTheFirstByte() {
        var machine = receiving(hangUp: true)
        let (action, body) = feed(&machine, "H")
        #expect(action == .fail(.hungUp, detail: "hung up when the response started (lost response)", retry: false))
        #expect(body.isEmpty)
    }

    @Test func aMalformedResponseFailsTheRequest() {
        var machine = receiving()
        let (action, _) = feed(&machine, "SMTP ready\r\n\r\n")
        #expect(action == .fail(.other, detail: "malformed HTTP response: not an HTTP/1.x status line", retry: false))
    }

    @Test func anIdleConnectionThatHearsAnythingCloses() {
        var closedByServer = idle()
        #expect(closedByServer.peerClosed() == .close)
        var chatty = idle()
        #expect(feed(&chatty, "HTTP/1.1 408 Request Timeout\r\n\r\n").action == .close)
        #expect(closedByServer.state == .closed && chatty.state == .closed)
    }

    @Test func closingFailsARequestInFlightAndConnectsAgainFromScratch() {
        var machine = receiving(served: 2)
        #expect(machine.close() == .fail(.other, detail: "run stopped", retry: false))
        #expect(machine.close() == .wait)
        machine.connect()
        #expect(machine.served == 0)
        var connecting = Machine()
        connecting.connect()
        #expect(connecting.close() == .close)
        #expect(connecting.connected() == .wait)
    }
}
