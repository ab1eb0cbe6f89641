import AppStoreModel
import Dispatch
import Foundation
import PayStorm
import ReferenceLedger
import RunControl
import Signing

#if canImport(Glibc)
import Glibc
#endif

extension Command {
    /// `paystorm ledger serve`: the reference ledger as a process.
    static let ledger = Command(
        name: "ledger",
        summary: "run the reference ledger (a correct or deliberately flawed purchase backend)",
        help: ledgerHelp
    ) { arguments in
        var arguments = arguments
        guard let verb = arguments.positional() else {
            throw CLIError(.usage, "missing subcommand; try 'paystorm ledger serve --help'")
        }
        guard verb == "serve" else { throw CLIError(.usage, "unknown ledger subcommand '\(verb)'") }
        return try serveLedger(&arguments)
    }

    private static var ledgerHelp: String {
        var text = """
            paystorm ledger serve: the reference purchase backend (target contract v1) on libmicrohttpd and SQLite

            Usage: paystorm ledger serve --db FILE --trust ROOT.der --bundle-id ID [OPTIONS]

            Prints the bound address (HOST:PORT) as its first line, then serves until SIGTERM, SIGINT or SIGHUP,
            and then shuts down cleanly (exit 0 after SIGTERM, 130 after SIGINT, 129 after SIGHUP).

            Options:
              --listen HOST:PORT       address to listen on (default 127.0.0.1:0, any free port)
              --db FILE                SQLite database (created and migrated if needed); locked while served
              --trust FILE             DER (or PEM) root certificate to trust; repeatable
              --bundle-id ID           the app's bundle ID
              --environment ENV        Sandbox (default), Production, Xcode or LocalTesting
              --app-apple-id N         the app's Apple ID (required with Production)
              --threads N              HTTP worker threads (default 4)
              --max-body-bytes N       larger bodies get 413 (default 1048576)
              --flaw NAME              switch on one realistic bug; repeatable
              --allow-non-loopback     allow listening on a non-loopback address
              --exit-with-stdin        also shut down cleanly when standard input ends (the process that
                                       started the ledger and holds its other end is gone)

            Flaws:

            """
        let width = LedgerFlaw.allCases.map(\.rawValue.count).max() ?? 0
        for flaw in LedgerFlaw.allCases {
            let pad = String(repeating: " ", count: width - flaw.rawValue.count)
            text += "  \(flaw.rawValue)\(pad)  \(flaw.summary) (breaks: \(flaw.invariant))\n"
        }
        return text
    }

    private static func serveLedger(_ arguments: inout Arguments) throws -> ExitCode {
        let listen = try arguments.option("--listen") ?? "127.0.0.1:0"
        guard let database = try arguments.option("--db") else { throw CLIError(.usage, "missing --db FILE") }
        guard !database.isEmpty, database != ":memory:", !database.hasPrefix("file:") else {
            throw CLIError(.usage, "--db '\(database)' would be a temporary database that keeps nothing; name a file")
        }
        let trustPaths = try arguments.options("--trust")
        guard !trustPaths.isEmpty else { throw CLIError(.usage, "missing --trust ROOT.der") }
        guard let bundleId = try arguments.option("--bundle-id") else {
            throw CLIError(.usage, "missing --bundle-id ID")
        }
        let environment = try environmentOption(&arguments)
        let appAppleId = try arguments.int("--app-apple-id").map { Int64($0) }
        let threads = try arguments.int("--threads") ?? 4
        let maxBody = try arguments.int("--max-body-bytes") ?? 1 << 20
        guard threads > 0, threads <= 256 else { throw CLIError(.usage, "--threads must be 1…256") }
        guard maxBody > 0 else { throw CLIError(.usage, "--max-body-bytes must be positive") }
        let flaws = Set(try LedgerFlaw.parse(try arguments.options("--flaw")))
        let allowNonLoopback = arguments.flag("--allow-non-loopback")
        let exitWithStdin = arguments.flag("--exit-with-stdin")
        try arguments.finish()

        let (host, port) = try ListenAddress.parse(listen)
        if !allowNonLoopback && !ListenAddress.isLoopback(host) {
            throw CLIError(.usage, "refusing to listen on non-loopback \(host); pass --allow-non-loopback")
        }
        let roots = try trustedRoots(trustPaths)

        let configuration = LedgerConfiguration(
            host: host,
            port: port,
            databasePath: database,
            trustedRoots: roots,
            bundleId: bundleId,
            environment: environment,
            appAppleId: appAppleId,
            flaws: flaws,
            threads: threads,
            maxBodyBytes: maxBody
        )
        raiseOpenFileLimit()
        let ledger = try openLedger(configuration)
        let termination = TerminationSignal.listen()
        let address: String
        do {
            address = try ledger.start()
        } catch {
            throw CLIError(.unreachable, "\(error)")
        }
        // A parent that went away must not kill the ledger with SIGPIPE as it announces its address: it then
        // shuts down cleanly when its standard input ends.
        signal(SIGPIPE, SIG_IGN)
        // Write the address straight to fd 1 so it is out before anything else (no stdio buffering).
        try? FileHandle.standardOutput.write(contentsOf: Data((address + "\n").utf8))
        if exitWithStdin { stopAtEndOfInput(termination.stop) }

        // Wait for a signal (or the end of standard input), then shut down cleanly (stop accepting, finish
        // requests, commit).
        return termination.wait { ledger.stop() }
    }

    /// `--environment`, one of the App Store's (sandbox when not given).
    private static func environmentOption(_ arguments: inout Arguments) throws -> Environment {
        let environment = try arguments.option("--environment").map(Environment.init(rawValue:)) ?? .sandbox
        guard environment.isKnown else {
            let known = Environment.allKnown.map(\.rawValue).joined(separator: ", ")
            throw CLIError(.usage, "--environment must be one of \(known)")
        }
        return environment
    }

    /// The DER of each `--trust` file (DER or PEM), each checked to be a certificate.
    private static func trustedRoots(_ trustPaths: [String]) throws -> [[UInt8]] {
        var roots: [[UInt8]] = []
        for path in trustPaths {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CLIError(.noInput, "cannot read trust root \(path)")
            }
            let der = try derFromFile(Array(data), path: path)
            guard (try? Certificate(der: der)) != nil else {
                throw CLIError(.badInput, "trust root \(path) is not an X.509 certificate (DER or PEM)")
            }
            roots.append(der)
        }
        return roots
    }

    /// Opens the ledger's database; one that is not writable or held by another ledger cannot be written.
    private static func openLedger(_ configuration: LedgerConfiguration) throws -> ReferenceLedger {
        let ledger: ReferenceLedger
        do {
            ledger = try ReferenceLedger(configuration: configuration)
        } catch let error as LedgerError {
            // Not writable or held by another ledger: the output cannot be written; anything else is a bad input.
            let writable = error.kind != .databaseNotWritable && error.kind != .databaseInUse
            throw CLIError(writable ? .badInput : .cannotWrite, "cannot open ledger: \(error)")
        } catch {
            throw CLIError(.badInput, "cannot open ledger: \(error)")
        }
        return ledger
    }

    /// Stops `termination`'s wait when standard input ends: the parent holding its other end exited, however it
    /// ended (SIGKILL included), so a ledger it embedded never serves on as an orphan.
    private static func stopAtEndOfInput(_ stop: @escaping @Sendable () -> Void) {
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 512)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
            }
            stop()
        }
    }

    /// Raises the soft open-file limit towards the hard one: the HTTP server's connection limit stays below
    /// it, and a shell's usual 1,024 would let a few hundred stalled clients shut out everyone else.
    private static func raiseOpenFileLimit() {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return }
        let wanted = min(limit.rlim_max, 65_536)
        guard limit.rlim_cur < wanted else { return }
        limit.rlim_cur = wanted
        _ = setrlimit(resource, &limit)
    }

    /// Accepts DER, or PEM with one certificate.
    private static func derFromFile(_ bytes: [UInt8], path: String) throws -> [UInt8] {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.contains("-----BEGIN CERTIFICATE-----") else { return bytes }
        let body = text.components(separatedBy: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let data = Data(base64Encoded: body.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw CLIError(.badInput, "trust root \(path) is not valid PEM")
        }
        return Array(data)
    }
}

extension LedgerFlaw {
    /// Parses `--flaw` values, as `ledger serve` and `run` both take them.
    /// - Throws: `CLIError` with `.usage` naming the unknown flaw and listing the known ones.
    static func parse(_ names: [String]) throws -> [LedgerFlaw] {
        try names.map { name in
            guard let flaw = LedgerFlaw(rawValue: name) else {
                let known = LedgerFlaw.allCases.map(\.rawValue).joined(separator: ", ")
                throw CLIError(.usage, "unknown flaw '\(name)'; known: \(known)")
            }
            return flaw
        }
    }
}
