internal import Dispatch
public import HTTPServer

/// The App Store Server API served over HTTP or HTTPS: each request goes to
/// ``AppStoreServerAPI/answer(_:)``, and a slow answer is held back without holding a server thread.
///
/// ```swift
/// let certificate = try TLSServerCertificate.issue(by: pki, hostNames: TLSServerCertificate.appStoreHostNames)
/// let server = try APIServer(api: api, tls: HTTPServerTLS(keyPEM: try certificate.keyPEM(),
///                                                        certificateChainPEM: certificate.certificatePEM))
/// print(server.baseURL)  // https://127.0.0.1:PORT
/// ```
public final class APIServer: Sendable {
    /// The HTTP server.
    public let server: HTTPServer
    private let secure: Bool

    /// Starts serving at once.
    /// - Parameters:
    ///   - api: the API to serve.
    ///   - host: a numeric loopback address.
    ///   - port: the port, or 0 for any free one.
    ///   - tls: the HTTPS key and certificate, or nil for plain HTTP.
    ///   - threads: the server's thread pool.
    ///   - observe: called with each request and its answer, on a server thread (a run writes its history).
    /// - Throws: `HTTPServerError` when the server cannot start.
    public init(
        api: AppStoreServerAPI,
        host: String = "127.0.0.1",
        port: UInt16 = 0,
        tls: HTTPServerTLS?,
        threads: Int = 4,
        observe: (@Sendable (HTTPRequest, APIAnswer) -> Void)? = nil
    ) throws {
        secure = tls != nil
        server = try HTTPServer(host: host, port: port, threads: threads, tls: tls) { request, respond in
            let answer = api.answer(request)
            observe?(request, answer)
            if answer.delaySeconds > 0 {
                DispatchQueue.global().asyncAfter(deadline: .now() + answer.delaySeconds) { respond(answer.response) }
            } else {
                respond(answer.response)
            }
        }
    }

    /// The base URL a client points at, such as `https://127.0.0.1:8443`.
    public var baseURL: String { (secure ? "https://" : "http://") + server.address }

    /// Stops serving (answers held back by a slow fault are given up to 10 s).
    public func shutdown() { server.shutdown() }
}
