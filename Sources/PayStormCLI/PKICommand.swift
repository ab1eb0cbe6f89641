import Dispatch
import Foundation
import HTTPServer
import PayStorm
import RunControl
import Signing

#if canImport(Glibc)
import Glibc
#endif

extension Command {
    /// `paystorm pki`: create, inspect and serve OCSP for PayStorm's test PKI.
    static let pki = Command(
        name: "pki",
        summary: "create and inspect the test PKI (root, intermediate, leaf) and serve OCSP for it",
        help: """
            paystorm pki: PayStorm's own App Store test PKI

            Usage:
              paystorm pki init DIR [--ocsp-url URL] [--valid-from DATE] [--valid-days N] [--force]
              paystorm pki show DIR
              paystorm pki ocsp --pki DIR [--listen HOST:PORT]

            init  writes a P-384 root and intermediate and a P-256 leaf with Apple's extension OIDs:
                  root.der and root.pem (give root.der to your backend's SignedDataVerifier),
                  intermediate.pem, leaf.pem, and root.key, intermediate.key, leaf.key (mode 0600).
                  --ocsp-url URL   write an AIA-OCSP URL into the intermediate and leaf, for backends
                                   that keep online checks on (serve it with 'paystorm pki ocsp')
                  --valid-from D   start of validity, ISO 8601 (default: 400 days ago, so back-dated
                                   signedDates verify)
                  --valid-days N   length of validity in days (default: until 2 years from now)
                  --force          replace a PKI already in DIR
            show  prints each certificate's subject, validity, key, Apple OIDs and SHA-256 fingerprint.
            ocsp  answers OCSP requests (HTTP POST, application/ocsp-request) with GOOD, signed by the
                  issuer. Prints the bound address as its first line and serves until SIGTERM/SIGINT.
                  --listen defaults to the leaf's OCSP URL if it is on loopback, else 127.0.0.1:0.
                  Only loopback addresses are accepted.

            Exit codes: 0 success, 64 usage, 65 malformed PKI, 66 missing PKI, 73 cannot write
            (or DIR already holds a PKI without --force).

            """
    ) { arguments in
        var arguments = arguments
        guard let verb = arguments.positional() else {
            throw CLIError(.usage, "missing subcommand (init, show or ocsp); run 'paystorm pki --help'")
        }
        switch verb {
        case "init": return try pkiInit(&arguments)
        case "show": return try pkiShow(&arguments)
        case "ocsp": return try pkiOCSP(&arguments)
        default: throw CLIError(.usage, "unknown pki subcommand '\(verb)' (init, show or ocsp)")
        }
    }
}

/// `pki init DIR`: checks the options, refuses to overwrite a PKI without `--force`, then generates and writes.
private func pkiInit(_ arguments: inout Arguments) throws -> ExitCode {
    let request = try PKIInitRequest(parsing: &arguments)
    let directory = request.directory
    let existing = TestPKI.fileNames.filter {
        FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent($0))
    }
    if !existing.isEmpty && !request.force {
        throw CLIError(
            .cannotWrite,
            "\(directory) already holds a PKI (\(existing.joined(separator: ", "))); pass --force to replace it"
        )
    }
    let pki: TestPKI
    do {
        pki = try TestPKI.generate(request.options)
    } catch {
        throw CLIError(.internalError, "cannot generate the PKI: \(error)")
    }
    do {
        try pki.write(to: directory)
    } catch let error as PKIError {
        throw CLIError(.cannotWrite, error.message)
    }
    print("wrote a test PKI to \(directory)")
    print(describe(pki))
    print("trust root.der in the backend: SignedDataVerifier([root.der], ...), environment Sandbox")
    return .success
}

/// What `pki init` was asked for, every option checked: the folder, `--force`, and the certificates' OCSP URL
/// and validity.
private struct PKIInitRequest {
    var directory: String
    var force: Bool
    var options: PKIOptions

    init(parsing arguments: inout Arguments) throws {
        let ocspURL = try arguments.option("--ocsp-url")
        let validFromText = try arguments.option("--valid-from")
        let validDays = try arguments.int("--valid-days")
        force = arguments.flag("--force")
        directory = try arguments.requiredPositional("DIR")
        try arguments.finish()

        if let ocspURL {
            guard let url = URL(string: ocspURL), url.scheme == "http", url.host != nil else {
                throw CLIError(.usage, "--ocsp-url must be an http:// URL, got '\(ocspURL)'")
            }
        }
        options = PKIOptions(ocspURL: ocspURL)
        if let validFromText {
            guard let date = parseISODate(validFromText) else {
                throw CLIError(
                    .usage,
                    "--valid-from expects an ISO 8601 date such as 2025-01-31 or 2025-01-31T00:00:00Z"
                )
            }
            options.notBefore = date
            options.notAfter = Date() + 2 * 365 * 86_400
        }
        if let validDays {
            guard validDays > 0, validDays <= 36_500 else { throw CLIError(.usage, "--valid-days must be 1…36500") }
            options.notAfter = options.notBefore + Double(validDays) * 86_400
        }
        guard options.notAfter > options.notBefore else {
            throw CLIError(.usage, "the validity ends before it starts; pass a larger --valid-days")
        }
    }
}

private func pkiShow(_ arguments: inout Arguments) throws -> ExitCode {
    let directory = try arguments.requiredPositional("DIR")
    try arguments.finish()
    let pki = try loadPKI(directory)
    print(describe(pki))
    return .success
}

private func pkiOCSP(_ arguments: inout Arguments) throws -> ExitCode {
    guard let directory = try arguments.option("--pki") else { throw CLIError(.usage, "missing --pki DIR") }
    let listen = try arguments.option("--listen")
    let threads = try arguments.int("--threads") ?? 2
    try arguments.finish()
    guard threads > 0, threads <= 64 else { throw CLIError(.usage, "--threads must be 1…64") }

    let pki = try loadPKI(directory)
    var address = listen ?? "127.0.0.1:0"
    if listen == nil, let url = pki.leaf.ocspURL.flatMap(URL.init(string:)), let host = url.host,
        ListenAddress.isLoopback(host)
    {
        address = "\(host):\(url.port ?? 80)"
    }
    let (host, port) = try ListenAddress.parse(address)
    guard ListenAddress.isLoopback(host) else {
        throw CLIError(.usage, "refusing to listen on non-loopback address \(host); OCSP for the test PKI stays local")
    }

    let responder = OCSPResponder(pki: pki)
    let server: HTTPServer
    do {
        server = try HTTPServer(host: host, port: port, threads: threads, maxBodyBytes: 64 << 10) { request in
            guard request.method == "POST" else {
                return HTTPResponse(status: 405, headers: ["allow": "POST"])
            }
            return HTTPResponse(
                status: 200,
                headers: ["content-type": "application/ocsp-response"],
                body: responder.respond(to: request.body)
            )
        }
    } catch {
        throw CLIError(.unreachable, "\(error)")
    }
    // The address goes straight to fd 1, unbuffered, so scripts can read it at once.
    FileHandle.standardOutput.write(Data((server.address + "\n").utf8))

    return TerminationSignal.wait { server.shutdown() }
}

/// Loads a PKI, mapping its errors to exit codes (66 missing, 65 malformed).
private func loadPKI(_ directory: String) throws -> TestPKI {
    do {
        return try TestPKI.load(from: directory)
    } catch let error as PKIError {
        throw CLIError(error.kind == .missing ? .noInput : .badInput, error.message)
    }
}

private func describe(_ pki: TestPKI) -> String {
    let formatter = ISO8601DateFormatter()
    var lines: [String] = []
    for (name, certificate, key) in [
        ("root", pki.root, pki.rootKey), ("intermediate", pki.intermediate, pki.intermediateKey),
        ("leaf", pki.leaf, pki.leafKey),
    ] {
        lines.append("\(name):")
        lines.append("  subject      \(certificate.subject)")
        lines.append("  issuer       \(certificate.issuer)")
        lines.append(
            "  valid        \(formatter.string(from: certificate.notBefore)) .. \(formatter.string(from: certificate.notAfter))"
        )
        lines.append("  key          EC \(key.curve?.rawValue ?? "unknown curve")")
        var oids: [String] = []
        for oid in [AppleOID.intermediate, AppleOID.leaf] {
            if let critical = certificate.extensionCriticality(oid: oid) {
                oids.append(critical ? "\(oid) (critical)" : oid)
            }
        }
        lines.append("  apple OIDs   \(oids.isEmpty ? "none" : oids.joined(separator: ", "))")
        if let url = certificate.ocspURL { lines.append("  OCSP         \(url)") }
        lines.append("  sha256       \(certificate.sha256Fingerprint)")
    }
    return lines.joined(separator: "\n")
}

private func parseISODate(_ text: String) -> Date? {
    let full = ISO8601DateFormatter()
    if let date = full.date(from: text) { return date }
    let dateOnly = ISO8601DateFormatter()
    dateOnly.formatOptions = [.withFullDate]
    return dateOnly.date(from: text)
}
