internal import CMicroHTTPD
internal import CPayStormShims
internal import Foundation
import Synchronization

#if canImport(Glibc)
internal import Glibc
#endif

// How the daemon reads and answers a request: the callbacks libmicrohttpd calls on a pool thread, the state
// they share, and the handler they call.

/// What answers a complete request: at once on the pool thread, or later, from any thread.
enum Handler: Sendable {
    case sync(@Sendable (HTTPRequest) -> HTTPResponse)
    case async(@Sendable (HTTPRequest, @escaping @Sendable (HTTPResponse) -> Void) -> Void)
}

/// What every pool thread shares: the handler, the limits, and the count of suspended requests.
final class ServerContext: Sendable {
    let maxBodyBytes: Int
    let requestTimeout: UInt32
    let idleTimeout: UInt32
    let handler: Handler
    let outstanding = Atomic<Int>(0)

    init(maxBodyBytes: Int, requestTimeout: UInt32, idleTimeout: UInt32, handler: Handler) {
        self.maxBodyBytes = maxBodyBytes
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
        self.handler = handler
    }
}

/// The answer to a suspended request, handed from whichever thread responds to the pool thread.
private final class ResponseSlot: Sendable {
    let response = Mutex<HTTPResponse?>(nil)
}

/// A suspended connection. @unchecked: libmicrohttpd allows MHD_resume_connection from any thread, and the
/// pointer stays valid while the connection is suspended.
private struct SuspendedConnection: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// One request being read; owned by libmicrohttpd's per-request pointer from the URI callback until the
/// completed callback, and touched only by the thread serving that connection.
private final class RequestState {
    let rawURI: String
    var body: [UInt8] = []
    var started = false
    var tooLarge = false
    /// Set when the request went to an async handler; holds its answer once given.
    var slot: ResponseSlot?

    init(rawURI: String) {
        self.rawURI = rawURI
    }
}

let uriLogger:
    @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) -> UnsafeMutableRawPointer? = {
        cls,
        uri,
        connection in
        // A request has begun: until it is complete, silence is cut short (a keep-alive connection
        // had the longer idle timeout since its previous request).
        if let cls, let connection {
            let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
            _ = ps_mhd_set_connection_timeout(connection, context.requestTimeout)
        }
        let text = uri.map { String(cString: $0) } ?? "/"
        return Unmanaged.passRetained(RequestState(rawURI: text)).toOpaque()
    }

let requestCompleted:
    @convention(c) (
        UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
        MHD_RequestTerminationCode
    ) -> Void = { cls, connection, requestPointer, termination in
        guard let requestPointer, let statePointer = requestPointer.pointee else { return }
        let state = Unmanaged<RequestState>.fromOpaque(statePointer).takeRetainedValue()
        if let cls {
            let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
            if state.slot != nil {
                context.outstanding.subtract(1, ordering: .releasing)
            }
            // Answered in full: the connection now waits, idle, for the next request of a keep-alive client.
            if termination == .REQUEST_TERMINATED_COMPLETED_OK, let connection {
                _ = ps_mhd_set_connection_timeout(connection, context.idleTimeout)
            }
        }
        requestPointer.pointee = nil
    }

private let headerCollector:
    @convention(c) (
        UnsafeMutableRawPointer?, MHD_ValueKind, UnsafePointer<CChar>?, UnsafePointer<CChar>?
    ) -> MHD_Result = { cls, _, key, value in
        guard let cls, let key else { return .YES }
        let headers = cls.assumingMemoryBound(to: [String: String].self)
        let name = String(cString: key).lowercased()
        let text = value.map { String(cString: $0) } ?? ""
        if let existing = headers.pointee[name] {
            headers.pointee[name] = existing + ", " + text
        } else {
            headers.pointee[name] = text
        }
        return .YES
    }

let accessHandler:
    @convention(c) (
        UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
        UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutablePointer<Int>?,
        UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    ) -> MHD_Result = { cls, connection, url, method, _, uploadData, uploadSize, requestPointer in
        guard let cls, let connection, let requestPointer, let statePointer = requestPointer.pointee else {
            return .NO
        }
        let context = Unmanaged<ServerContext>.fromOpaque(cls).takeUnretainedValue()
        let state = Unmanaged<RequestState>.fromOpaque(statePointer).takeUnretainedValue()

        if !state.started {
            state.started = true
            if let lengthText = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length"),
                let length = Int(String(cString: lengthText)), length > 0
            {
                // Answer before reading the body; libmicrohttpd then closes the connection.
                if length > context.maxBodyBytes { return queue(tooLarge(context.maxBodyBytes), on: connection) }
                // The body arrives in several chunks: one allocation, not a copy per doubling.
                state.body.reserveCapacity(length)
            }
            return .YES
        }
        if let uploadSize, uploadSize.pointee > 0 {
            if !state.tooLarge, let uploadData {
                if state.body.count + uploadSize.pointee > context.maxBodyBytes {
                    // Chunked bodies have no length up front: drop what arrives and answer 413 at the end.
                    state.tooLarge = true
                    state.body = []
                } else {
                    uploadData.withMemoryRebound(to: UInt8.self, capacity: uploadSize.pointee) { bytes in
                        state.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: uploadSize.pointee))
                    }
                }
            }
            uploadSize.pointee = 0
            return .YES
        }
        if state.tooLarge {
            return queue(tooLarge(context.maxBodyBytes), on: connection)
        }
        if let slot = state.slot {
            // Resumed: the async handler has answered.
            let response = slot.response.withLock { $0.take() }
            return queue(response ?? .json(500, ["error": "no response"]), on: connection)
        }

        var headers: [String: String] = [:]
        _ = withUnsafeMutablePointer(to: &headers) { pointer in
            MHD_get_connection_values(connection, .HEADER_KIND, headerCollector, pointer)
        }
        let query = state.rawURI.firstIndex(of: "?").map { String(state.rawURI[state.rawURI.index(after: $0)...]) }
        let request = HTTPRequest(
            method: method.map { String(cString: $0) } ?? "GET",
            path: url.map { String(cString: $0) } ?? "/",
            query: query,
            headers: headers,
            body: state.body
        )
        state.body = []
        switch context.handler {
        case .sync(let handler):
            return queue(handler(request), on: connection)
        case .async(let handler):
            let slot = ResponseSlot()
            state.slot = slot
            context.outstanding.add(1, ordering: .relaxed)
            MHD_suspend_connection(connection)
            let suspended = SuspendedConnection(pointer: connection)
            let answered = Atomic<Bool>(false)
            handler(request) { response in
                guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return }
                slot.response.withLock { $0 = response }
                MHD_resume_connection(suspended.pointer)
            }
            return .YES
        }
    }

private func tooLarge(_ limit: Int) -> HTTPResponse {
    .json(413, ["error": "request body exceeds \(limit) bytes"])
}

private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
    let created = response.body.withUnsafeBytes { bytes in
        // MUST_COPY: libmicrohttpd keeps its own copy, so the Swift array may go away.
        MHD_create_response_from_buffer(
            bytes.count,
            UnsafeMutableRawPointer(mutating: bytes.baseAddress),
            .RESPMEM_MUST_COPY
        )
    }
    guard let created else { return .NO }
    defer { MHD_destroy_response(created) }
    for (name, value) in response.headers where name.lowercased() != "content-length" {
        _ = MHD_add_response_header(created, name, value)
    }
    return MHD_queue_response(connection, UInt32(clamping: response.status), created)
}
