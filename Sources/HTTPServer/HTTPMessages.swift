internal import Foundation

/// One HTTP request, fully read (the body is accumulated before the handler runs).
public struct HTTPRequest: Sendable {
    /// The request method, such as `GET` or `POST`.
    public var method: String
    /// The path without the query, as libmicrohttpd decoded it (for example `/accounts/abc`).
    public var path: String
    /// The raw query string after `?`, or nil when there is none.
    public var query: String?
    /// The request headers, with lowercased names. Repeated headers are joined with `, `.
    public var headers: [String: String]
    /// The request body.
    public var body: [UInt8]

    /// Creates a request (used by tests and by in-process callers).
    public init(
        method: String,
        path: String,
        query: String? = nil,
        headers: [String: String] = [:],
        body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}

/// One HTTP response.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: Int
    /// Response headers (a `Content-Length` is added by the server).
    public var headers: [String: String]
    /// The response body.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response with `Content-Type: application/json`.
    ///
    /// - Parameters:
    ///   - status: The status code.
    ///   - object: The value to encode (keys sorted, so bodies are stable).
    /// - Returns: The response; a 500 with a JSON reason if encoding fails.
    public static func json(_ status: Int, _ object: some Encodable) -> HTTPResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            let data = try encoder.encode(object)
            return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(data))
        } catch {
            let body = Array(#"{"error":"response encoding failed"}"#.utf8)
            return HTTPResponse(status: 500, headers: ["Content-Type": "application/json"], body: body)
        }
    }
}

/// Why the server could not start.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// One line naming the problem.
    public var message: String
    /// The `errno` at the failure, or 0.
    public var code: Int32

    /// A description for logs and the command line: the message, which says what the `errno` meant.
    public var description: String { message }
}

/// Limits that keep a server answering when clients misbehave (idle or half-sent connections by the
/// thousand), without getting in the way of a load run's keep-alive connections.
public struct HTTPServerLimits: Sendable, Equatable {
    /// Connections served at once, over all pool threads; more wait in the kernel's accept queue. Clamped
    /// below the process's open-file limit, so accepting never fails for want of a descriptor.
    public var maxConnections: Int
    /// Seconds a connection may stay silent while its request is incomplete (a new connection, or
    /// headers or a body still arriving) before it is closed.
    public var requestTimeoutSeconds: Int
    /// Seconds a keep-alive connection may stay idle between complete requests before it is closed.
    public var idleTimeoutSeconds: Int

    /// Creates limits; the defaults hold thousands of stalled connections while a fresh one is still
    /// answered at once.
    public init(maxConnections: Int = 16_384, requestTimeoutSeconds: Int = 10, idleTimeoutSeconds: Int = 60) {
        self.maxConnections = maxConnections
        self.requestTimeoutSeconds = requestTimeoutSeconds
        self.idleTimeoutSeconds = idleTimeoutSeconds
    }
}

/// HTTPS for a server: a private key and a certificate chain in PEM, served with libmicrohttpd's TLS (GnuTLS).
public struct HTTPServerTLS: Sendable, Hashable {
    /// The server's private key in PEM (PKCS#8 or traditional).
    public var keyPEM: String
    /// The server's certificate, then any intermediates, in PEM.
    public var certificateChainPEM: String

    /// Creates the TLS settings.
    /// - Parameters:
    ///   - keyPEM: the private key in PEM.
    ///   - certificateChainPEM: the certificate (then any intermediates) in PEM.
    public init(keyPEM: String, certificateChainPEM: String) {
        self.keyPEM = keyPEM
        self.certificateChainPEM = certificateChainPEM
    }
}
