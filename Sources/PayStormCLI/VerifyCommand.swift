import AppStoreModel
import Foundation
import Minting
import PayStorm
import Primitives
import RunControl
import Signing

extension Command {
    /// `paystorm verify`: PayStorm's Swift verifier on one body or JWS from standard input.
    static let verify = Command(
        name: "verify",
        summary: "verify a signed notification, transaction or renewal info from stdin",
        help: VerifyCommand.help
    ) { arguments in
        let input = Array(FileHandle.standardInput.readDataToEndOfFile())
        let verdict = try VerifyCommand.verdict(arguments, input: input)
        print(verdict)
        return verdict == "OK" ? .success : .badInput
    }
}

/// The parsing and checking behind `paystorm verify`, apart from standard input and output.
enum VerifyCommand {
    static let help = """
        paystorm verify: check signed data the way Apple's SignedDataVerifier does

        Usage:
          paystorm verify (--trust ROOT | --pki DIR) --bundle-id ID --environment ENV [OPTIONS] < INPUT

        Reads one webhook body {"signedPayload":"..."}, a device body {"signedTransaction":"..."}, or a
        bare JWS from standard input, and prints OK or the status Apple's library would raise
        (VERIFICATION_FAILURE, INVALID_APP_IDENTIFIER, INVALID_CERTIFICATE, INVALID_CHAIN_LENGTH,
        INVALID_ENVIRONMENT, RETRYABLE_VERIFICATION_FAILURE).

        Options:
          --trust ROOT          the trusted root certificate, DER or PEM
          --pki DIR             trust the root of a PKI written by 'paystorm pki init DIR'
          --bundle-id ID        the expected bundleId (required)
          --environment ENV     Sandbox | Production | Xcode | LocalTesting (required)
          --app-apple-id N      the expected appAppleId (required in Production)
          --kind KIND           notification (default) | transaction | renewal-info | app-transaction
          --online              check OCSP against the certificates' AIA URLs, at the current time

        Exit codes: 0 OK; 65 rejected, or the input is empty; 64 bad option; 66 missing root or PKI.

        """

    /// Parses the arguments, verifies `input`, and returns `OK` or the status name.
    /// - Throws: `CLIError` with the documented exit code.
    static func verdict(_ arguments: Arguments, input: [UInt8]) throws -> String {
        var args = arguments
        let trustPath = try args.option("--trust")
        let pkiDirectory = try args.option("--pki")
        let bundleId = try args.option("--bundle-id")
        let environmentOption = try args.option("--environment")
        let appAppleIdOption = try args.option("--app-apple-id")
        let kindOption = try args.option("--kind") ?? SignedObjectKind.notification.rawValue
        let online = args.flag("--online")
        try args.finish()

        guard let bundleId else { throw CLIError(.usage, "missing --bundle-id ID") }
        guard let environmentOption else { throw CLIError(.usage, "missing --environment ENV") }
        let environment = try parseEnvironment(environmentOption)
        guard let kind = SignedObjectKind(rawValue: kindOption) else {
            throw CLIError(
                .usage,
                "unknown --kind '\(kindOption)' (known: \(SignedObjectKind.allCases.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        let appAppleId = try appAppleIdOption.map { text in
            guard let value = Int64(text) else {
                throw CLIError(.usage, "--app-apple-id expects an integer, got '\(text)'")
            }
            return value
        }
        let root = try trustedRoot(trustPath: trustPath, pkiDirectory: pkiDirectory)
        let verifier: SignedDataVerifier
        do {
            verifier = try SignedDataVerifier(
                rootCertificates: [root],
                enableOnlineChecks: online,
                environment: environment,
                bundleId: bundleId,
                appAppleId: appAppleId
            )
        } catch {
            throw CLIError(.usage, "\(error)")
        }
        guard let jws = extractJWS(input) else {
            throw CLIError(.badInput, "no JWS on standard input")
        }
        return verify(jws, as: kind, with: verifier)?.status.rawValue ?? "OK"
    }

    /// `--environment`'s value, refused (exit 64) unless Apple defines it.
    private static func parseEnvironment(_ option: String) throws -> Environment {
        let environment = Environment(rawValue: option)
        guard environment.isKnown else {
            throw CLIError(
                .usage,
                "unknown environment '\(option)' (known: \(Environment.allKnown.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        return environment
    }

    /// The root certificate from `--trust ROOT` or `--pki DIR`: exactly one of the two.
    private static func trustedRoot(trustPath: String?, pkiDirectory: String?) throws -> [UInt8] {
        switch (trustPath, pkiDirectory) {
        case (let path?, nil): return try readRoot(path)
        case (nil, let directory?): return try MintCommand.loadPKI(directory).root.der
        case (nil, nil): throw CLIError(.usage, "missing --trust ROOT or --pki DIR")
        default: throw CLIError(.usage, "give only one of --trust and --pki")
        }
    }

    /// Why `verifier` rejects `jws` read as `kind`, or nil when it accepts it.
    private static func verify(
        _ jws: String,
        as kind: SignedObjectKind,
        with verifier: SignedDataVerifier
    ) -> VerificationError? {
        switch kind {
        case .notification: verifier.verifyAndDecodeNotification(jws).failure
        case .transaction: verifier.verifyAndDecodeTransaction(jws).failure
        case .renewalInfo: verifier.verifyAndDecodeRenewalInfo(jws).failure
        case .appTransaction: verifier.verifyAndDecodeAppTransaction(jws).failure
        }
    }

    /// The JWS in a body (`signedPayload` or `signedTransaction`) or the trimmed input itself.
    static func extractJWS(_ input: [UInt8]) -> String? {
        let text = String(decoding: input, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return nil }
        guard text.hasPrefix("{") else { return text }
        guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8)) else {
            // Not JSON after all: hand it to the verifier, which rejects it as a malformed JWS.
            return text
        }
        return object["signedPayload"]?.stringValue ?? object["signedTransaction"]?.stringValue ?? text
    }

    /// A root certificate file as DER, accepting PEM too.
    static func readRoot(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError(.noInput, "cannot read root certificate \(path)")
        }
        let bytes = Array(data)
        if String(decoding: bytes.prefix(64), as: UTF8.self).contains("-----BEGIN") {
            do {
                return try Certificate(pem: String(decoding: bytes, as: UTF8.self)).der
            } catch {
                throw CLIError(.badInput, "\(path) is not a PEM certificate")
            }
        }
        do {
            return try Certificate(der: bytes).der
        } catch {
            throw CLIError(.badInput, "\(path) is not a DER certificate")
        }
    }
}

extension Result {
    /// The error, or `nil` on success.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
