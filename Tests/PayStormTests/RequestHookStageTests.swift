import Foundation
import Load
import Profile
import TargetProcesses
import Testing

@testable import PayStorm

/// The request hook's stage on the engine's thread: what it hands over and when it gives answered requests back.
@Suite(.timeLimit(.minutes(1)))
struct RequestHookStageTests {
    /// Answers every request at once with its id alone: send it as rendered.
    static let echo = [
        "python3", "-c",
        "import json, sys\nfor line in sys.stdin:\n    print(json.dumps({'id': json.loads(line)['id']}), flush=True)",
    ]

    /// The engine asks for the time the stage gave it as whole nanoseconds, which can read back a hair earlier:
    /// the answered request was then never due, and the engine asked again and again, forever.
    @Test func anAnsweredRequestIsDueAtTheIntendedTimeTheEngineGivesBack() throws {
        let process = try RequestHookProcess(command: Self.echo)
        defer { process.close() }
        let config = try JSONDecoder().decode(RequestHookConfig.self, from: Data(#"["python3"]"#.utf8))
        let stage = RequestHookStage(process: process, config: config) { 0 }
        let times = (0..<200).map { 1.0 + Double($0) * 0.0137 }
        let engineTime = { (at: Double) in Duration.nanoseconds(Int64(at * 1e9)).seconds }
        #expect(times.contains { engineTime($0) < $0 }, "no intended time here reads back earlier")
        for (id, at) in times.enumerated() {
            let request = LoadRequest(id: id, url: "http://127.0.0.1:1/t", body: Array("{}".utf8))
            let line = RequestHookRequest(
                id: id,
                role: "deviceDelivery",
                kind: "device",
                method: "POST",
                url: request.url,
                headers: [],
                body: request.body,
                account: [:],
                transaction: nil
            )
            #expect(stage.hand(request, line: line, at: at) == nil)
        }
        let deadline = Date().addingTimeInterval(20)
        while !stage.awaiting.isEmpty && stage.failure == nil && Date() < deadline {
            stage.collect()
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(stage.failure == nil && stage.awaiting.isEmpty)
        let released = times.filter { stage.popReady(dueBy: engineTime($0)) != nil }
        #expect(released.count == times.count)
        #expect(stage.figures?.count == times.count)
    }
}
