internal import COpenSSL

/// An OpenSSL call failed; carries the operation's name and OpenSSL's first queued error.
public struct SigningError: Error, CustomStringConvertible, Sendable {
    /// The OpenSSL function (or step) that failed.
    public var operation: String
    /// The `ERR_get_error` code, 0 when OpenSSL queued none.
    public var code: UInt
    /// OpenSSL's reason string, or a description of the failure.
    public var reason: String

    /// Creates an error for a failed step.
    public init(operation: String, code: UInt = 0, reason: String) {
        self.operation = operation
        self.code = code
        self.reason = reason
    }

    public var description: String {
        code == 0 ? "\(operation): \(reason)" : "\(operation): \(reason) (OpenSSL error \(code))"
    }

    /// Drains OpenSSL's thread-local error queue into one error (the first code is the cause).
    static func openSSL(_ operation: String) -> SigningError {
        let first = ERR_get_error()
        while ERR_get_error() != 0 {}
        guard first != 0 else { return SigningError(operation: operation, reason: "failed") }
        let reason = ERR_reason_error_string(first).map { String(cString: $0) } ?? "unknown reason"
        return SigningError(operation: operation, code: first, reason: reason)
    }
}

/// Why a PKI directory could not be written or read back.
public struct PKIError: Error, CustomStringConvertible, Sendable {
    /// The class of failure, so a command line can choose its exit code.
    public enum Kind: Sendable, Hashable {
        /// A file or the directory does not exist.
        case missing
        /// A file exists but does not parse, or keys and certificates do not match.
        case malformed
        /// The directory or a file cannot be written.
        case cannotWrite
        /// The directory already holds a PKI.
        case exists
    }

    /// The class of failure.
    public var kind: Kind
    /// One line naming the problem and the path.
    public var message: String

    /// Creates a PKI error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// Clears OpenSSL's error queue after an expected failure, so it cannot leak into a later error.
func clearOpenSSLErrors() {
    ERR_clear_error()
}
