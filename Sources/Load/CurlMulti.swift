internal import CCurl
internal import CPayStormShims

#if canImport(Glibc)
internal import Glibc
#endif

/// The libcurl multi calls of the hot path that can fail, in one place so that a test can make them fail.
struct CurlMultiCalls: Sendable {
    /// `curl_multi_socket_action` (the count of running handles is not used).
    var socketAction: @Sendable (_ multi: UnsafeMutableRawPointer, _ socket: curl_socket_t, _ mask: Int32) -> CURLMcode
    /// `curl_multi_remove_handle`.
    var removeHandle: @Sendable (_ multi: UnsafeMutableRawPointer, _ easy: UnsafeMutableRawPointer) -> CURLMcode

    /// libcurl's own functions.
    static let libcurl = CurlMultiCalls(
        socketAction: { multi, socket, mask in
            var running: Int32 = 0
            return curl_multi_socket_action(multi, socket, mask, &running)
        },
        removeHandle: { multi, easy in curl_multi_remove_handle(multi, easy) }
    )
}

/// The libcurl multi handle both request paths share (libcurl transfers, and the connects of the HTTP/1.1
/// path): the sockets libcurl asks to watch, its next timeout, and the checked calls that drive it.
///
/// libcurl is driven with `curl_multi_socket_action` from the transport's epoll loop (as wrk drives its
/// sockets): it says which sockets to watch and when its next timeout is, so no call polls every connection.
/// A call that fails leaves libcurl unable to go on with its transfers, so the first failure is kept in
/// ``failure`` and ends the run. Confined to the engine's thread.
final class CurlMulti {
    let handle: UnsafeMutableRawPointer
    private let epoll: Epoll
    private let calls: CurlMultiCalls
    /// libcurl's next timeout (monotonic ns), or nil when it has none.
    var deadline: Int64?
    /// The first call that failed, as the error that ends the run; nil while none has.
    private(set) var failure: LoadEngineError?
    /// The HTTP/1.1 path, told when libcurl opens or closes a socket (it may own that descriptor number).
    weak var adopter: HTTP1Path?
    /// epoll interest per socket as registered with the kernel.
    private var registered: [Int32: UInt32] = [:]
    /// Registered sockets libcurl no longer watches (idle keep-alive connections).
    private var idle: Set<Int32> = []

    /// Makes the multi handle with the options `configuration` needs.
    /// - Throws: ``LoadEngineError`` when libcurl cannot make one or refuses an option (named in the message).
    init(_ configuration: LoadEngineConfiguration, epoll: Epoll, calls: CurlMultiCalls) throws(LoadEngineError) {
        guard let handle = curl_multi_init() else {
            throw LoadEngineError(message: "libcurl could not create a multi handle")
        }
        self.handle = handle
        self.epoll = epoll
        self.calls = calls
        do {
            try setOptions(configuration)
        } catch {
            throw LoadEngineError(message: "cannot set up the transport: \(error)")
        }
    }

    private func setOptions(_ configuration: LoadEngineConfiguration) throws(CurlSetupError) {
        let setup = CurlMultiSetup(multi: handle)
        let connections = configuration.connectionsPerHost
        if configuration.httpVersion != .http1_1 || configuration.libcurlTransfers {
            // The HTTP/1.1 path keeps its own per-origin cap (libcurl would count its connections too).
            try setup.set(CURLMOPT_MAX_HOST_CONNECTIONS, "CURLMOPT_MAX_HOST_CONNECTIONS", connections)
        }
        try setup.set(CURLMOPT_MAXCONNECTS, "CURLMOPT_MAXCONNECTS", connections * 2)
        if configuration.httpVersion == .http2 {
            try setup.set(CURLMOPT_PIPELINING, "CURLMOPT_PIPELINING", Int(CURLPIPE_MULTIPLEX))
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        try setup.set(CURLMOPT_SOCKETDATA, "CURLMOPT_SOCKETDATA", pointer: me)
        try setup.check(
            ps_curl_multi_setopt_socket_function(handle, transportSocket),
            "CURLMOPT_SOCKETFUNCTION",
            "a callback"
        )
        try setup.set(CURLMOPT_TIMERDATA, "CURLMOPT_TIMERDATA", pointer: me)
        try setup.check(
            ps_curl_multi_setopt_timer_function(handle, transportTimer),
            "CURLMOPT_TIMERFUNCTION",
            "a callback"
        )
    }

    deinit { curl_multi_cleanup(handle) }

    /// The pointer every easy handle's socket callbacks get back (this multi handle).
    var callbackTarget: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Adds an easy handle; libcurl's code when it refuses (the caller fails that one request).
    func add(_ easy: UnsafeMutableRawPointer) -> CURLMcode { curl_multi_add_handle(handle, easy) }

    /// Takes an easy handle out of the multi handle.
    /// - Returns: false when libcurl refused (``failure`` says so): the handle is still in it, not to be reused.
    func remove(_ easy: UnsafeMutableRawPointer) -> Bool {
        let code = calls.removeHandle(handle, easy)
        guard code == CURLM_OK else {
            fail(code, in: "curl_multi_remove_handle")
            return false
        }
        return true
    }

    /// Runs libcurl's timeouts when they are due.
    func runTimeouts(now: Int64) {
        guard let due = deadline, due <= now else { return }
        deadline = nil
        let code = calls.socketAction(handle, CURL_SOCKET_TIMEOUT, 0)
        if code != CURLM_OK { fail(code, in: "curl_multi_socket_action (timeouts)") }
    }

    /// Calls `body` with each finished handle and its result.
    func readDone(_ body: (_ easy: UnsafeMutableRawPointer, _ code: CURLcode) -> Void) {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(handle, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            body(easy, message.pointee.data.result)
        }
    }

    /// Hands epoll `events` on one of libcurl's sockets to libcurl.
    func socketReady(_ socket: Int32, events: UInt32) {
        if idle.contains(socket) {
            // An idle keep-alive socket with news (usually the server closing it): libcurl finds out on its
            // next use, and it is no longer watched.
            epoll.remove(socket)
            registered[socket] = nil
            idle.remove(socket)
            return
        }
        var action: Int32 = 0
        if events & EPOLLIN.rawValue != 0 { action |= CURL_CSELECT_IN }
        if events & EPOLLOUT.rawValue != 0 { action |= CURL_CSELECT_OUT }
        if events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { action |= CURL_CSELECT_ERR }
        let code = calls.socketAction(handle, socket, action)
        if code != CURLM_OK { fail(code, in: "curl_multi_socket_action") }
    }

    /// Keeps the first failure: the call and libcurl's code and message.
    private func fail(_ code: CURLMcode, in call: String) {
        guard failure == nil else { return }
        let reason = String(cString: curl_multi_strerror(code))
        failure = LoadEngineError(message: "libcurl failed in \(call): \(reason) (code \(code.rawValue))")
    }

    /// Called by libcurl: watch `socket` for `what` (CURL_POLL_IN/OUT/INOUT/REMOVE).
    ///
    /// A removed socket stays registered, marked idle, because libcurl removes and re-adds a
    /// keep-alive socket around every request (usually with the same interest, so no system
    /// call is needed); an event on an idle socket unregisters it.
    func watch(socket: Int32, what: Int32) {
        if what == CURL_POLL_REMOVE {
            if registered[socket] != nil { idle.insert(socket) }
            return
        }
        var wanted: UInt32 = 0
        if what & CURL_POLL_IN != 0 { wanted |= EPOLLIN.rawValue }
        if what & CURL_POLL_OUT != 0 { wanted |= EPOLLOUT.rawValue }
        if !idle.isEmpty { idle.remove(socket) }
        let current = registered[socket]
        guard current != wanted else { return }
        epoll.setInterest(socket, wanted, known: current != nil)
        registered[socket] = wanted
    }

    /// Called when libcurl opens a socket: its number may have been used by a closed one.
    func forget(socket: Int32) {
        registered[socket] = nil
        idle.remove(socket)
        adopter?.forget(socket: socket)
    }

    /// Called when libcurl closes a socket.
    func socketClosing(_ socket: Int32) {
        registered[socket] = nil
        idle.remove(socket)
        adopter?.socketClosing(socket)
    }

    /// Stops tracking a socket the HTTP/1.1 path takes over.
    /// - Returns: whether it was registered with epoll.
    func release(socket: Int32) -> Bool {
        idle.remove(socket)
        return registered.removeValue(forKey: socket) != nil
    }
}

/// The epoll set of the engine's thread, shared by the transport's loop and the sockets its paths watch.
final class Epoll {
    let descriptor: Int32

    /// - Throws: ``LoadEngineError`` when the system cannot make one.
    init() throws(LoadEngineError) {
        descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard descriptor >= 0 else {
            throw LoadEngineError(message: "cannot create the engine's epoll set: \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    /// Sets the epoll events watched on `socket`: a change when `known`, else (or when the kernel
    /// has forgotten a closed and reused descriptor) a registration.
    func setInterest(_ socket: Int32, _ events: UInt32, known: Bool) {
        var event = epoll_event()
        event.events = events
        event.data.fd = socket
        if !known || epoll_ctl(descriptor, EPOLL_CTL_MOD, socket, &event) != 0 {
            if epoll_ctl(descriptor, EPOLL_CTL_ADD, socket, &event) != 0 && errno == EEXIST {
                epoll_ctl(descriptor, EPOLL_CTL_MOD, socket, &event)
            }
        }
    }

    /// Stops watching `socket`.
    func remove(_ socket: Int32) { epoll_ctl(descriptor, EPOLL_CTL_DEL, socket, nil) }
}
