internal import CMicroHTTPD
internal import CPayStormShims
internal import Foundation
import Synchronization

#if canImport(Glibc)
internal import Glibc
#endif

/// A small HTTP/1.1 server on libmicrohttpd: a pool of polling threads, so an idle connection
/// holds a descriptor and a little memory but never a thread; keep-alive; a request body size limit (413
/// when exceeded); a connection limit and timeouts (``HTTPServerLimits``); and a synchronous handler that
/// runs on the pool thread.
///
/// ```swift
/// let server = try HTTPServer(port: 0) { request in
///     HTTPResponse(status: 200, body: Array("hello".utf8))
/// }
/// print(server.address)  // 127.0.0.1:PORT
/// server.shutdown()
/// ```
// @unchecked: the daemon pointer is immutable and stopped exactly once (guarded by `stopped`);
// libmicrohttpd is thread-safe for the calls made here.
public final class HTTPServer: @unchecked Sendable {
    private let daemon: OpaquePointer
    private let stopped = Atomic<Bool>(false)
    private let context: Unmanaged<ServerContext>
    private let host: String
    private let tlsStrings: (key: UnsafeMutablePointer<CChar>?, certificate: UnsafeMutablePointer<CChar>?)

    /// The bound port (the real one when 0 was asked for).
    public let port: UInt16

    /// The bound address as `HOST:PORT` (IPv6 hosts in brackets).
    public var address: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Starts listening and serving at once.
    ///
    /// - Parameters:
    ///   - host: A numeric IPv4 or IPv6 address to bind.
    ///   - port: The port, or 0 for any free port.
    ///   - threads: The size of the thread pool that accepts, reads and runs the handler.
    ///   - maxBodyBytes: Larger request bodies are answered with 413 and never reach the handler.
    ///   - limits: The connection limit and timeouts.
    ///   - tls: HTTPS settings, or nil for plain HTTP.
    ///   - handler: Called once per complete request, on a pool thread; it must not block for long.
    /// - Throws: `HTTPServerError` when the address is not numeric or the daemon cannot start (for HTTPS: a key
    ///   or certificate GnuTLS cannot load).
    public convenience init(
        host: String = "127.0.0.1",
        port: UInt16 = 0,
        threads: Int = 4,
        maxBodyBytes: Int = 1 << 20,
        limits: HTTPServerLimits = HTTPServerLimits(),
        tls: HTTPServerTLS? = nil,
        handler: @escaping @Sendable (HTTPRequest) -> HTTPResponse
    ) throws {
        try self.init(
            host: host,
            port: port,
            threads: threads,
            maxBodyBytes: maxBodyBytes,
            limits: limits,
            tls: tls,
            handler: .sync(handler)
        )
    }

    /// Starts a server whose handler answers later: the connection is suspended (its pool thread goes on
    /// serving others) until `respond` is called, from any thread, exactly once.
    ///
    /// Use it when answering waits for something slow that is not CPU work, such as a database commit
    /// shared by many requests.
    /// - Parameters:
    ///   - host: A numeric IPv4 or IPv6 address to bind.
    ///   - port: The port, or 0 for any free port.
    ///   - threads: The size of the thread pool that accepts, reads and runs the handler.
    ///   - maxBodyBytes: Larger request bodies are answered with 413 and never reach the handler.
    ///   - limits: The connection limit and timeouts.
    ///   - tls: HTTPS settings, or nil for plain HTTP.
    ///   - asyncHandler: Called once per complete request, on a pool thread, with the function that answers it.
    /// - Throws: `HTTPServerError` when the address is not numeric or the daemon cannot start.
    public convenience init(
        host: String = "127.0.0.1",
        port: UInt16 = 0,
        threads: Int = 4,
        maxBodyBytes: Int = 1 << 20,
        limits: HTTPServerLimits = HTTPServerLimits(),
        tls: HTTPServerTLS? = nil,
        asyncHandler: @escaping @Sendable (HTTPRequest, _ respond: @escaping @Sendable (HTTPResponse) -> Void) -> Void
    ) throws {
        try self.init(
            host: host,
            port: port,
            threads: threads,
            maxBodyBytes: maxBodyBytes,
            limits: limits,
            tls: tls,
            handler: .async(asyncHandler)
        )
    }

    private init(
        host: String,
        port: UInt16,
        threads: Int,
        maxBodyBytes: Int,
        limits: HTTPServerLimits,
        tls: HTTPServerTLS?,
        handler: Handler
    ) throws {
        guard let address = Self.socketAddress(host: host, port: port) else {
            throw HTTPServerError(message: "listen address '\(host)' is not a numeric IPv4 or IPv6 address", code: 0)
        }
        let requestTimeout = UInt32(clamping: max(1, limits.requestTimeoutSeconds))
        let context = Unmanaged.passRetained(
            ServerContext(
                maxBodyBytes: maxBodyBytes,
                requestTimeout: requestTimeout,
                idleTimeout: UInt32(clamping: max(1, limits.idleTimeoutSeconds)),
                handler: handler
            )
        )
        // Kept for the daemon's life: libmicrohttpd does not promise to copy the PEM text.
        let keyPEM = tls.map { strdup($0.keyPEM) } ?? nil
        let certificatePEM = tls.map { strdup($0.certificateChainPEM) } ?? nil
        let (started, code) = Self.startDaemon(
            on: address,
            threads: threads,
            limits: limits,
            requestTimeout: requestTimeout,
            tls: tls != nil,
            context: context,
            keyPEM: keyPEM,
            certificatePEM: certificatePEM
        )
        guard let started else {
            context.release()
            free(keyPEM)
            free(certificatePEM)
            throw HTTPServerError(
                message: "cannot listen on \(host):\(port): " + Self.listenFailure(code: code, tls: tls != nil),
                code: code
            )
        }
        self.tlsStrings = (keyPEM, certificatePEM)
        self.daemon = started
        self.context = context
        self.host = host
        self.port = ps_mhd_daemon_port(started)
    }

    /// Starts the daemon on a pool of polling threads; nil and the `errno` libmicrohttpd left when it cannot.
    private static func startDaemon(
        on address: (sockaddr_storage, isIPv6: Bool),
        threads: Int,
        limits: HTTPServerLimits,
        requestTimeout: UInt32,
        tls: Bool,
        context: Unmanaged<ServerContext>,
        keyPEM: UnsafeMutablePointer<CChar>?,
        certificatePEM: UnsafeMutablePointer<CChar>?
    ) -> (daemon: OpaquePointer?, code: Int32) {
        // Each pool thread polls its own share of the connections, so a stalled connection costs a
        // descriptor, never a thread. poll, not epoll: libmicrohttpd 0.9.75's epoll mode is edge-triggered
        // and takes a short read as "drained", so a client that sends part of a request and closes in one
        // go leaves a CLOSE-WAIT socket held until the timeout (measured with a 1,000-connection limit: 809
        // of 3,000 such clients still held 14 s later, 0 with poll). Level-triggered poll sees the close at
        // once, and measured no slower with a load run's 64 keep-alive connections.
        var flags = UInt32(MHD_USE_POLL.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue)
        // Suspend/resume brings the inter-thread channel, which MHD_quiesce_daemon also needs.
        flags |= UInt32(MHD_ALLOW_SUSPEND_RESUME.rawValue)
        if tls { flags |= UInt32(MHD_USE_TLS.rawValue) }
        if address.isIPv6 { flags |= UInt32(MHD_USE_IPv6.rawValue) }
        var storage = address.0
        let started = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                ps_mhd_start_daemon(
                    flags,
                    address,
                    UInt32(max(1, threads)),
                    Self.connectionLimit(limits.maxConnections),
                    // New connections get the short timeout until a request is complete (see `uriLogger`).
                    requestTimeout,
                    // Room for headers and the read buffer; bodies are copied out of this pool as they
                    // arrive. libmicrohttpd zeroes the pool after every request, so its size is paid per
                    // request: 256 KiB cost a 256 KiB memset each (about 10 µs, 2.8% of the ledger's CPU
                    // under `Benchmarks/ledger/run.sh`); 64 KiB is still twice libmicrohttpd's default.
                    Self.connectionMemoryBytes,
                    accessHandler,
                    context.toOpaque(),
                    uriLogger,
                    context.toOpaque(),
                    requestCompleted,
                    context.toOpaque(),
                    keyPEM,
                    certificatePEM
                )
            }
        }
        return (started, started == nil ? errno : 0)
    }

    /// Why listening failed, from the `errno` libmicrohttpd left: an address in use or refused is said as such;
    /// only a failure without one points at the TLS key and certificate.
    static func listenFailure(code: Int32, tls: Bool) -> String {
        switch code {
        case EADDRINUSE:
            return
                "the address is already in use (another process listens there; choose another port, or 0 for any free one)"
        case EACCES:
            return "permission denied (a port below 1024 needs privileges; choose another port)"
        case EADDRNOTAVAIL:
            return "no such local address on this machine"
        case 0:
            return tls
                ? "libmicrohttpd refused the TLS setup (is the key and certificate PEM valid?)"
                : "libmicrohttpd could not start"
        default:
            return String(cString: strerror(code)) + (tls ? " (with TLS: is the key and certificate PEM valid?)" : "")
        }
    }

    /// A numeric IPv4 or IPv6 listen address with its port, and whether it is IPv6; nil for anything else.
    private static func socketAddress(host: String, port: UInt16) -> (sockaddr_storage, isIPv6: Bool)? {
        var storage = sockaddr_storage()
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            withUnsafeMutableBytes(of: &storage) { raw in
                let sin = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                sin.pointee.sin_family = sa_family_t(AF_INET)
                sin.pointee.sin_port = port.bigEndian
                sin.pointee.sin_addr = v4
            }
            return (storage, false)
        }
        if inet_pton(AF_INET6, host, &v6) == 1 {
            withUnsafeMutableBytes(of: &storage) { raw in
                let sin6 = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                sin6.pointee.sin6_family = sa_family_t(AF_INET6)
                sin6.pointee.sin6_port = port.bigEndian
                sin6.pointee.sin6_addr = v6
            }
            return (storage, true)
        }
        return nil
    }

    /// Per-connection memory for headers and the read buffer (libmicrohttpd's pool); request headers
    /// must fit in it.
    static let connectionMemoryBytes = 64 * 1024

    /// Connections open now (reading, waiting for an answer, or idle between requests).
    public var openConnections: Int { Int(ps_mhd_daemon_connections(daemon)) }

    /// The connection limit, kept below the open-file limit (less a margin for the listening socket,
    /// the database and the pool's own descriptors), so that accept never fails with EMFILE.
    private static func connectionLimit(_ wanted: Int) -> UInt32 {
        var limit = rlimit()
        let descriptors =
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(clamping: limit.rlim_cur) : 1024
        return UInt32(clamping: max(1, min(wanted, descriptors - 64)))
    }

    /// Stops accepting, lets requests already handed to an async handler finish (up to 10 s), then closes
    /// every connection and waits for running handlers. Safe to call twice.
    public func shutdown() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let listener = MHD_quiesce_daemon(daemon)
        // libmicrohttpd must not be stopped with suspended connections.
        let deadline = ContinuousClock.now + .seconds(10)
        let context = context.takeUnretainedValue()
        while context.outstanding.load(ordering: .acquiring) > 0 && ContinuousClock.now < deadline {
            usleep(1000)
        }
        MHD_stop_daemon(daemon)
        if listener >= 0 { close(listener) }
    }

    deinit {
        shutdown()
        context.release()
        free(tlsStrings.key)
        free(tlsStrings.certificate)
    }
}
