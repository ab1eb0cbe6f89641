internal import CCurl
internal import CPayStormShims

#if canImport(Glibc)
internal import Glibc
#endif

/// One reusable easy handle with the buffers of its current transfer.
///
/// Confined to the engine's thread (curl handles are not thread-safe), hence not Sendable.
final class Transfer {
    let easy: UnsafeMutableRawPointer
    var bodyBuffer: UnsafeMutableRawPointer?
    var bodyCapacity = 0
    var response: [UInt8] = []
    var responseBytes = 0
    var capture = true
    var captureLimit = 1 << 20
    var headerList: UnsafeMutablePointer<curl_slist>?
    var lastHeaders: [(name: String, value: String)] = []
    var lastURL = ""
    var lastShape: (method: String, bodyCount: Int)?
    var id = 0
    var kind = ""
    var intended: Int64 = 0
    var sent: Int64 = 0
    /// Monotonic time when libcurl was about to write the request (0 if it never was).
    var wireStartAbsolute: Int64 = 0
    /// How many times libcurl was about to write the request: 2 when it resent it after a reused connection
    /// closed unanswered.
    var wireAttempts = 0
    /// The timeout set on the handle, in ms (set again only when a transfer needs another).
    var timeoutMilliseconds = 0
    /// Hang up when the response starts (a lost-response fault).
    var hangUp = false

    /// Makes a handle with the options every transfer shares.
    /// - Throws: ``CurlSetupError`` when libcurl refuses one (the handle is freed); nil when libcurl
    ///   cannot make a handle at all (out of memory).
    init?(configuration: LoadEngineConfiguration, callbacks: UnsafeMutableRawPointer) throws(CurlSetupError) {
        guard let easy = curl_easy_init() else { return nil }
        self.easy = easy
        capture = configuration.captureBodies
        captureLimit = configuration.maxCapturedBodyBytes
        let me = Unmanaged.passUnretained(self).toOpaque()
        let setup = CurlEasySetup(easy: easy)
        try setCommonOptions(setup, owner: me, configuration: configuration, callbacks: callbacks)
        try setup.set(CURLOPT_WRITEDATA, pointer: me)
        try setup.callback(CURLOPT_WRITEFUNCTION, ps_curl_easy_setopt_write_function(easy, transferWrite))
        try setup.set(CURLOPT_PREREQDATA, pointer: me)
        try setup.callback(CURLOPT_PREREQFUNCTION, ps_curl_easy_setopt_prereq_function(easy, transferPrerequest))
        timeoutMilliseconds = Int(configuration.totalTimeout.microseconds / 1000)
        // No CURLOPT_HEADERDATA: with it set and no header function, libcurl writes headers into the body.
        try setup.set(CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        switch configuration.httpVersion {
        case .http1_1:
            try setup.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        case .http2:
            try setup.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
            try setup.set(CURLOPT_PIPEWAIT, 1)
        }
    }

    /// Sets up the handle for `request`, allowed `timeout` milliseconds from now; the body is copied
    /// into a buffer owned by this transfer, so it outlives the caller's array until the transfer ends.
    /// - Throws: ``CurlSetupError`` when libcurl refuses an option; the handle's remembered options are
    ///   forgotten, so the next request sets every one again.
    func prepare(_ request: LoadRequest, timeout: Int, http2PriorKnowledge: Bool) throws(CurlSetupError) {
        do {
            try setOptions(for: request, timeout: timeout, http2PriorKnowledge: http2PriorKnowledge)
        } catch {
            (lastURL, lastShape, lastHeaders, timeoutMilliseconds) = ("", nil, [], -1)
            curl_slist_free_all(headerList)
            headerList = nil
            throw error
        }
    }

    private func setOptions(
        for request: LoadRequest,
        timeout: Int,
        http2PriorKnowledge: Bool
    ) throws(CurlSetupError) {
        let setup = CurlEasySetup(easy: easy)
        id = request.id
        kind = request.kind
        response.removeAll(keepingCapacity: response.capacity <= 64 * 1024)
        responseBytes = 0
        wireStartAbsolute = 0
        wireAttempts = 0
        var timeout = timeout
        // A transfer cannot be cut mid-request: a reset fault becomes the shortest timeout instead.
        if request.resetAfterBytes != nil { timeout = 1 }
        if timeout != timeoutMilliseconds {
            timeoutMilliseconds = timeout
            try setup.set(CURLOPT_TIMEOUT_MS, timeout)
        }
        if request.hangUpOnResponse != hangUp {
            hangUp = request.hangUpOnResponse
            let code = ps_curl_easy_setopt_header_function(easy, hangUp ? transferHangUpOnHeader : nil)
            try setup.callback(CURLOPT_HEADERFUNCTION, code, isSet: hangUp)
        }
        // libcurl keeps options between transfers on a handle: set only what changed.
        if request.url != lastURL {
            try setup.set(CURLOPT_URL, string: request.url)
            lastURL = request.url
            if http2PriorKnowledge {
                let version =
                    request.url.hasPrefix("http://") ? CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE : CURL_HTTP_VERSION_2TLS
                try setup.set(CURLOPT_HTTP_VERSION, version)
            }
        }
        try setBody(of: request, setup: setup)
        try setHeaders(request.headers, setup: setup)
    }

    /// Copies the body into the handle's buffer and sets the method, unless it and the body's size are the
    /// previous transfer's.
    private func setBody(of request: LoadRequest, setup: CurlEasySetup) throws(CurlSetupError) {
        let method = request.method
        if request.body.count > bodyCapacity {
            bodyBuffer?.deallocate()
            bodyCapacity = max(request.body.count, 256)
            bodyBuffer = .allocate(byteCount: bodyCapacity, alignment: 16)
            lastShape = nil
        }
        if let bodyBuffer, !request.body.isEmpty {
            request.body.withUnsafeBytes { bodyBuffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        }
        let shape = (method: method, bodyCount: request.body.count)
        if let lastShape, lastShape == shape {
            // Same method and body size as the previous transfer: the options still hold.
        } else {
            try setMethod(method, bodyCount: request.body.count, setup: setup)
            lastShape = shape
        }
    }

    /// Sets the header list, unless the headers are the previous transfer's.
    private func setHeaders(_ headers: [(name: String, value: String)], setup: CurlEasySetup) throws(CurlSetupError) {
        if headerList == nil || !headers.elementsEqual(lastHeaders, by: { $0 == $1 }) {
            curl_slist_free_all(headerList)
            // An empty Expect stops libcurl's 100-continue wait on bodies above 1 KB.
            var list = curl_slist_append(nil, "Expect:")
            for header in headers {
                list = curl_slist_append(list, "\(header.name): \(header.value)")
            }
            headerList = list
            try setup.set(CURLOPT_HTTPHEADER, pointer: headerList)
            lastHeaders = headers
        }
    }

    private func setMethod(_ method: String, bodyCount: Int, setup: CurlEasySetup) throws(CurlSetupError) {
        try setup.set(CURLOPT_HTTPGET, 1)
        try setup.set(CURLOPT_CUSTOMREQUEST, string: nil)
        if bodyCount > 0 || method == "POST" {
            try setup.set(CURLOPT_POST, 1)
            try setup.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: bodyCount)
            try setup.set(CURLOPT_POSTFIELDS, pointer: bodyBuffer)
            if method != "POST" { try setup.set(CURLOPT_CUSTOMREQUEST, string: method) }
        } else if method == "HEAD" {
            try setup.set(CURLOPT_NOBODY, 1)
        } else if method != "GET" {
            try setup.set(CURLOPT_CUSTOMREQUEST, string: method)
        }
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        bodyBuffer?.deallocate()
    }
}

/// The options every easy handle of the transport shares: `owner` as its private pointer, the socket
/// callbacks with `callbacks` (the ``CurlMulti``), no signals, no proxy, TCP_NODELAY, the connect timeout,
/// the CA file.
/// - Throws: ``CurlSetupError`` naming the first option libcurl refuses.
func setCommonOptions(
    _ setup: CurlEasySetup,
    owner: UnsafeMutableRawPointer,
    configuration: LoadEngineConfiguration,
    callbacks: UnsafeMutableRawPointer
) throws(CurlSetupError) {
    let easy = setup.easy
    try setup.set(CURLOPT_NOSIGNAL, 1)
    try setup.set(CURLOPT_PRIVATE, pointer: owner)
    try setup.set(CURLOPT_SOCKOPTDATA, pointer: callbacks)
    try setup.callback(CURLOPT_SOCKOPTFUNCTION, ps_curl_easy_setopt_sockopt_function(easy, transportNewSocket))
    try setup.set(CURLOPT_CLOSESOCKETDATA, pointer: callbacks)
    try setup.callback(
        CURLOPT_CLOSESOCKETFUNCTION,
        ps_curl_easy_setopt_closesocket_function(easy, transportCloseSocket)
    )
    try setup.set(CURLOPT_TCP_NODELAY, 1)
    // Never through a proxy: traffic goes only where the URL says (and libcurl stops reading
    // the proxy environment variables on every transfer).
    try setup.set(CURLOPT_PROXY, string: "")
    try setup.set(CURLOPT_CONNECTTIMEOUT_MS, Int(configuration.connectTimeout.microseconds / 1000))
    if let caFile = configuration.caFile { try setup.set(CURLOPT_CAINFO, string: caFile) }
}

/// libcurl's header callback for a lost-response fault: aborts the transfer at the first response
/// header, so the request reached the target but the answer is lost.
private let transferHangUpOnHeader:
    @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        _,
        _,
        _,
        _ in
        0
    }

/// libcurl's write callback: appends to the transfer's response (or only counts it).
private let transferWrite: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data,
    size,
    count,
    user in
    let length = size * count
    guard let user else { return length }
    let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
    transfer.responseBytes += length
    if transfer.capture, let data, transfer.response.count < transfer.captureLimit {
        let kept = min(length, transfer.captureLimit - transfer.response.count)
        transfer.response.append(contentsOf: UnsafeRawBufferPointer(start: data, count: kept))
    }
    return length
}

/// libcurl's pre-request callback: stamps the moment the request goes on a connection, after any
/// wait for a free one, so that service time excludes queueing in the transport.
private let transferPrerequest:
    @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?, Int32, Int32)
        -> Int32 = {
            user,
            _,
            _,
            _,
            _ in
            if let user {
                let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
                transfer.wireStartAbsolute = monotonicNanoseconds()
                transfer.wireAttempts += 1
            }
            return 0  // CURL_PREREQFUNC_OK
        }
