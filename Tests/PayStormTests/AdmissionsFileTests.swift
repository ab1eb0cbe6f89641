import Foundation
import RunControl
import Simulation
import Testing

@testable import PayStorm

struct AdmissionsFileTests {
    static func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("admissions-\(UUID()).csv").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func changesRoundTripThroughTheFile() throws {
        let changes = [
            ArrivalAdmission.Change(arrival: 10_240, share: 768),
            ArrivalAdmission.Change(arrival: 10_496, share: 1),
            ArrivalAdmission.Change(arrival: 99_000, share: ArrivalAdmission.whole),
        ]
        let text = AdmissionsFile.render(changes)
        #expect(text.hasPrefix("arrival,share\n10240,768\n"))
        let path = try Self.write(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try AdmissionsFile.read(path: path) == changes)
    }

    @Test(arguments: [
        ("arrival,share\n10,768\nx,3\n", "line 3"),
        ("arrival,share\n10,0\n", "line 2"),
        ("arrival,share\n10,2000\n", "line 2"),
        ("arrival,share\n10,5\n9,6\n", "line 3"),
        ("arrival,share\n10\n", "line 2"),
    ])
    func malformedLinesAreNamed(text: String, line: String) throws {
        let path = try Self.write(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            try AdmissionsFile.read(path: path)
        } throws: { error in
            guard case RunError.badInput(let message) = error else { return false }
            return message.contains(line) && message.contains("--admissions \(path)")
        }
    }

    @Test func missingFileIsNoInput() {
        #expect {
            try AdmissionsFile.read(path: "/nonexistent/admissions.csv")
        } throws: { error in
            guard case RunError.noInput = error else { return false }
            return true
        }
    }
}
