internal import CCurl

// libcurl's C callbacks into a `Transport`: the multi handle's socket and timer callbacks (set in
// `Transport.setMultiOptions`) and each easy handle's new-socket callback (set in `Transfer`). Each gets the
// transport back from the pointer it was registered with.

/// libcurl's socket callback: forwards interest changes to the transport's epoll set.
let transportSocket:
    @convention(c) (UnsafeMutableRawPointer?, curl_socket_t, Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?)
        -> Int32 = {
            _,
            socket,
            what,
            user,
            _ in
            guard let user else { return 0 }
            Unmanaged<Transport>.fromOpaque(user).takeUnretainedValue().watch(socket: socket, what: what)
            return 0
        }

/// libcurl's new-socket callback: a descriptor number may be reused after a close, so forget
/// what was registered under it.
let transportNewSocket: @convention(c) (UnsafeMutableRawPointer?, curl_socket_t, curlsocktype) -> Int32 = {
    user,
    socket,
    _ in
    if let user { Unmanaged<Transport>.fromOpaque(user).takeUnretainedValue().forget(socket: socket) }
    return 0  // CURL_SOCKOPT_OK
}

/// libcurl's timer callback: remembers when libcurl next needs `CURL_SOCKET_TIMEOUT`.
let transportTimer: @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeMutableRawPointer?) -> Int32 = {
    _,
    milliseconds,
    user in
    guard let user else { return 0 }
    let transport = Unmanaged<Transport>.fromOpaque(user).takeUnretainedValue()
    transport.curlDeadline = milliseconds < 0 ? nil : monotonicNanoseconds() + Int64(milliseconds) * 1_000_000
    return 0
}
