import Foundation
import Testing

/// A Python HTTP server a test starts on 127.0.0.1:0: `python3 server.py WORK`, which writes its port to
/// `WORK/port` and stops when the test closes its standard input (or after 120 s at most).
struct PythonTestServer {
    /// The port the server listens on.
    let port: Int
    private let process: Process
    private let control: Pipe

    /// The end of every server script: binds `H` (a `BaseHTTPRequestHandler`) to 127.0.0.1:0, publishes the port
    /// and serves until standard input closes or 120 s pass.
    static let serve = #"""
        server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        open(work + "/port.tmp", "w").write(str(server.server_address[1]))
        import os; os.rename(work + "/port.tmp", work + "/port")
        # Ends when the test closes its standard input (or after 120 s at most).
        threading.Thread(target=lambda: (sys.stdin.read(), server.shutdown()), daemon=True).start()
        backstop = threading.Timer(120, server.shutdown)
        backstop.daemon = True
        backstop.start()
        server.serve_forever()
        """#

    /// Writes `script` to `WORK/server.py`, starts it and waits (10 s at most) for its port.
    static func start(_ script: String, in work: String) throws -> PythonTestServer {
        try script.write(toFile: work + "/server.py", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", work + "/server.py", work]
        let control = Pipe()
        process.standardInput = control
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: work + "/port") && Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        guard let port = Int((try? String(contentsOfFile: work + "/port", encoding: .utf8)) ?? "") else {
            process.terminate()
            process.waitUntilExit()
            throw CocoaError(.fileReadNoSuchFile)
        }
        return PythonTestServer(port: port, process: process, control: control)
    }

    /// Lends `body` a fresh work folder holding `provision.py` and a test PKI (`pki`), with `script` serving
    /// from it; the server is stopped and the folder removed afterwards.
    static func withBackend(
        _ name: String,
        server script: String,
        provision: String,
        _ body: (_ work: String, _ server: PythonTestServer) throws -> Void
    ) throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID())").path
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        try provision.write(toFile: work + "/provision.py", atomically: true, encoding: .utf8)
        #expect(try PayStormRunner.exec(["pki", "init", work + "/pki"]).0 == 0)
        let server = try start(script, in: work)
        defer { server.stop() }
        try body(work, server)
    }

    /// Stops the server and waits for it to exit.
    func stop() {
        try? control.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }
}
