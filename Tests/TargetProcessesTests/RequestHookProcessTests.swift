import Foundation
import Testing

@testable import TargetProcesses

#if canImport(Glibc)
import Glibc
#endif

/// The request hook as a process: lines out, answers back in any order, and why it is gone when it goes.
@Suite(.timeLimit(.minutes(1)))
struct RequestHookProcessTests {
    /// Waits (5 s at most) until `hook` has answered `count` lines or failed.
    private func collect(_ hook: RequestHookProcess, count: Int) -> ([RequestHookProcess.Received], String?) {
        var received: [RequestHookProcess.Received] = []
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            var ready = pollfd(fd: hook.wakeDescriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&ready, 1, 100)
            var drained = [UInt8](repeating: 0, count: 64)
            _ = drained.withUnsafeMutableBytes { read(hook.wakeDescriptor, $0.baseAddress, $0.count) }
            let (answers, failure) = hook.drain()
            received += answers
            if received.count >= count || failure != nil { return (received, failure) }
        }
        return (received, nil)
    }

    @Test func answersComeBackInTheOrderTheHookWritesThem() throws {
        // Answers every second line first: PayStorm matches answers by id, not by order.
        let script = #"""
            import json, sys
            held = None
            for line in sys.stdin:
                request = json.loads(line)
                answer = json.dumps({"id": request["id"], "addHeaders": {"X-Seen": request["account"]["id"]}})
                if held is None:
                    held = answer
                    continue
                print(answer); print(held); held = None
                sys.stdout.flush()
            """#
        let hook = try RequestHookProcess(command: ["python3", "-c", script])
        defer { hook.close() }
        for id in 0..<4 {
            var request = RequestHookProtocolTests.request
            request.id = id
            request.account["id"] = "u-\(id)"
            hook.send(request.line)
        }
        let (received, failure) = collect(hook, count: 4)
        #expect(failure == nil)
        let answers = try received.map { try $0.answer.get() }
        #expect(answers.map(\.id) == [1, 0, 3, 2])
        #expect(answers.map { $0.addHeaders["X-Seen"] } == ["u-1", "u-0", "u-3", "u-2"])
    }

    @Test func aHookThatExitsIsGoneWithItsStatusAndItsLastLineOfStandardError() throws {
        let hook = try RequestHookProcess(command: [
            "sh", "-c", "read line; echo 'Traceback' >&2; echo 'KeyError: secret' >&2; exit 3",
        ])
        defer { hook.close() }
        hook.send(RequestHookProtocolTests.request.line)
        let (_, failure) = collect(hook, count: 1)
        #expect(failure == "exited with status 3; its last line of standard error: KeyError: secret")
    }

    @Test func aHookClosedByPayStormIsNotAFailure() throws {
        let hook = try RequestHookProcess(command: ["cat"])
        hook.close()
        Thread.sleep(forTimeInterval: 0.2)
        #expect(hook.drain().failure == nil)
    }

    @Test func aProgramThatCannotStartSaysWhy() {
        #expect(throws: RequestHookStartError.self) {
            try RequestHookProcess(command: ["/nonexistent/hook"])
        }
    }
}
