internal import CCurl
internal import CPayStormShims

#if canImport(Glibc)
internal import Glibc
#endif

/// libcurl's message for a failure, with the system's when there is an errno: what results show.
func curlFailureDetail(_ code: CURLcode, osErrno: Int = 0) -> String {
    var detail = "curl \(code.rawValue): \(String(cString: curl_easy_strerror(code)))"
    if osErrno != 0 { detail += " (\(String(cString: strerror(Int32(osErrno)))))" }
    return detail
}

/// Maps a libcurl failure to a PayStorm error class (pure, tested by table).
func classifyCurlFailure(code: Int, osErrno: Int) -> LoadErrorClass {
    switch code {
    case 28:  // CURLE_OPERATION_TIMEDOUT
        return .timeout
    case 5, 6:  // COULDNT_RESOLVE_PROXY, COULDNT_RESOLVE_HOST
        return .dns
    case 7:  // COULDNT_CONNECT
        // A listener that accepts and resets at once fails the connect with ECONNRESET: it is there, not refusing.
        if osErrno == Int(ECONNRESET) { return .reset }
        return osErrno == Int(ECONNREFUSED) || osErrno == 0 ? .refused : .other
    case 35, 51, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91, 98:  // SSL_* and PEER_FAILED_VERIFICATION
        return .tls
    case 52, 55, 56, 18, 16, 92:  // GOT_NOTHING, SEND_ERROR, RECV_ERROR, PARTIAL_FILE, HTTP2, HTTP2_STREAM
        return .reset
    default:
        return .other
    }
}

/// The failure of a request an earlier attempt of which went out on a connection that died unanswered: the
/// server may have read that attempt, so a retry that never reached it leaves a request without an answer
/// (`reset`), not one never sent. Both transports retry so, once.
func failureAfterDeadConnection(_ error: LoadErrorClass, detail: String) -> (LoadErrorClass, String) {
    guard error.neverSent else { return (error, detail) }
    return (.reset, "the connection closed unanswered, then the retry failed: " + detail)
}

extension LoadEngine {
    /// Checks that `url`'s host accepts a connection (and a TLS handshake for `https://`),
    /// without sending a request.
    /// - Returns: nil when it does, else the failure's class and libcurl's message.
    public func probe(url: String) -> (error: LoadErrorClass, detail: String)? {
        guard let easy = curl_easy_init() else { return (.other, "libcurl could not create a handle") }
        defer { curl_easy_cleanup(easy) }
        let setup = CurlEasySetup(easy: easy)
        do {
            try setup.set(CURLOPT_NOSIGNAL, 1)
            try setup.set(CURLOPT_CONNECT_ONLY, 1)
            try setup.set(CURLOPT_CONNECTTIMEOUT_MS, Int(configuration.connectTimeout.microseconds / 1000))
            if let caFile = configuration.caFile { try setup.set(CURLOPT_CAINFO, string: caFile) }
            try setup.set(CURLOPT_URL, string: url)
        } catch {
            return (.other, error.description)
        }
        let code = curl_easy_perform(easy)
        guard code != CURLE_OK else { return nil }
        let osErrno = osErrno(of: easy)
        var detail = String(cString: curl_easy_strerror(code))
        if osErrno != 0 { detail += ": " + String(cString: strerror(Int32(osErrno))) }
        return (classifyCurlFailure(code: Int(code.rawValue), osErrno: osErrno), detail)
    }
}

/// The errno of a handle's last failed system call, or 0 when libcurl has none (or cannot say: the failure
/// is then classified and described by its libcurl code alone).
func osErrno(of easy: UnsafeMutableRawPointer) -> Int {
    var value = 0
    return ps_curl_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &value) == CURLE_OK ? value : 0
}

/// The seconds a response's `Retry-After` asked for (libcurl reads both forms), nil without one.
func retryAfter(of easy: UnsafeMutableRawPointer) -> Int? {
    var value: curl_off_t = 0
    guard ps_curl_easy_getinfo_off_t(easy, CURLINFO_RETRY_AFTER, &value) == CURLE_OK, value > 0 else { return nil }
    return Int(value)
}

/// The object a handle was made for (its `CURLOPT_PRIVATE`: a ``Transfer`` or an ``HTTP1Connection``).
func owner(of easy: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
    var pointer: UnsafeMutableRawPointer?
    let code = ps_curl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &pointer)
    // Every handle of the transport gets its owner when it is made, or is not used: an internal invariant.
    guard code == CURLE_OK, let pointer else { preconditionFailure("a libcurl handle without its owner") }
    return pointer
}
