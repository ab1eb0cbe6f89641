internal import CCurl

#if canImport(Glibc)
internal import Glibc
#endif

// libcurl's C callbacks into a `CurlMulti`: the multi handle's socket and timer callbacks (set in
// `CurlMulti.setOptions`) and each easy handle's new-socket and close-socket callbacks (set in
// `setCommonOptions`). Each gets the multi handle back from the pointer it was registered with.

/// libcurl's socket callback: forwards interest changes to the epoll set.
let transportSocket:
    @convention(c) (UnsafeMutableRawPointer?, curl_socket_t, Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?)
        -> Int32 = {
            _,
            socket,
            what,
            user,
            _ in
            guard let user else { return 0 }
            Unmanaged<CurlMulti>.fromOpaque(user).takeUnretainedValue().watch(socket: socket, what: what)
            return 0
        }

/// libcurl's new-socket callback: a descriptor number may be reused after a close, so forget
/// what was registered under it.
let transportNewSocket: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t, curlsocktype) -> Int32 = {
    user,
    socket,
    _ in
    if let user { Unmanaged<CurlMulti>.fromOpaque(user).takeUnretainedValue().forget(socket: socket) }
    return 0  // CURL_SOCKOPT_OK
}

/// libcurl's close-socket callback: a socket libcurl closes on its own while the HTTP/1.1 path holds it
/// (it should not happen) fails that connection first, so the descriptor number is never mistaken for
/// the next socket that reuses it.
let transportCloseSocket: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t) -> Int32 = { user, socket in
    if let user { Unmanaged<CurlMulti>.fromOpaque(user).takeUnretainedValue().socketClosing(socket) }
    return close(socket)
}

/// libcurl's timer callback: remembers when libcurl next needs `CURL_SOCKET_TIMEOUT`.
let transportTimer: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Int32 = {
    _,
    milliseconds,
    user in
    guard let user else { return 0 }
    let multi = Unmanaged<CurlMulti>.fromOpaque(user).takeUnretainedValue()
    multi.deadline = milliseconds < 0 ? nil : monotonicNanoseconds() + Int64(milliseconds) * 1_000_000
    return 0
}
