import Foundation

/// A Python HTTP server a test starts on 127.0.0.1:0: `python3 server.py WORK`, which writes its port to
/// `WORK/port` and stops when the test closes its standard input (or after 120 s at most).
public struct PythonTestServer {
    /// The port the server listens on.
    public let port: Int
    private let process: Process
    private let control: Pipe

    /// A whole server script around `respond`, Python that defines `respond(request, body)`: the request handler
    /// and the body's bytes in, `(status, answer bytes)` or `(status, answer bytes, {header: value})` out, under `lock`. The script has `work` (the folder),
    /// `lock`, and the modules `base64`, `json`, `sys`, `threading` and `time`.
    public static func script(respond: String) -> String {
        """
        import base64, json, sys, threading, time
        from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
        work = sys.argv[1]
        lock = threading.Lock()
        \(respond)
        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def do_any(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with lock:
                    status, answer, *extra = respond(self, body)
                self.send_response(status)
                for name, value in (extra[0] if extra else {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
            do_POST = do_any
            do_PUT = do_any
            do_GET = do_any
            def log_message(self, *args): pass
        \(serve)
        """
    }

    /// The end of every server script: binds `H` (a `BaseHTTPRequestHandler`) to 127.0.0.1:0, publishes the port
    /// and serves until standard input closes or 120 s pass.
    private static let serve = #"""
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
    public static func start(_ script: String, in work: String) throws -> PythonTestServer {
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
    /// - Throws: ``TestKitError`` when `paystorm pki init` fails, and what starting the server or `body` throws.
    public static func withBackend(
        _ name: String,
        server script: String,
        provision: String,
        _ body: (_ work: String, _ server: PythonTestServer) throws -> Void
    ) throws {
        try withTemporaryFolder(name) { folder in
            let work = folder.path
            try provision.write(toFile: work + "/provision.py", atomically: true, encoding: .utf8)
            let pki = try PayStormBinary.run(["pki", "init", work + "/pki"])
            guard pki.status == 0 else { throw TestKitError("paystorm pki init failed: \(pki.output)") }
            let server = try start(script, in: work)
            defer { server.stop() }
            try body(work, server)
        }
    }

    /// Stops the server and waits for it to exit.
    public func stop() {
        try? control.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }
}
