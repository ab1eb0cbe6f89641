internal import CCurl
internal import CPayStormShims

/// A libcurl setup call that libcurl refused: which option, with what value, and libcurl's code and
/// message. A refused option would otherwise leave the handle half set up (a transfer without our
/// timeout, a connection without our socket callbacks), so it is an error, never ignored.
struct CurlSetupError: Error, Equatable, CustomStringConvertible {
    /// The option's name as libcurl's headers spell it (`CURLOPT_TIMEOUT_MS`).
    var option: String
    /// The value that was refused, as text (`-1`, `a callback`).
    var value: String
    /// libcurl's result code (a `CURLcode` or a `CURLMcode`).
    var code: Int32
    /// libcurl's message for the code.
    var reason: String

    var description: String { "libcurl refused \(option) = \(value): \(reason) (code \(code))" }
}

/// The name of an easy option from libcurl's own option table (`CURLOPT_` and the table's name), so that
/// a call site names the option once.
func curlOptionName(_ option: CURLoption) -> String {
    guard let info = curl_easy_option_by_id(option), let name = info.pointee.name else {
        return "curl option \(option.rawValue)"
    }
    return "CURLOPT_" + String(cString: name)
}

/// Checks the result of a `curl_easy_setopt` (through a shim).
/// - Throws: ``CurlSetupError`` naming `option` and `value` unless `code` is `CURLE_OK`.
@inline(__always)
func checkSetup(_ code: CURLcode, _ option: CURLoption, _ value: @autoclosure () -> String) throws(CurlSetupError) {
    guard code != CURLE_OK else { return }
    throw CurlSetupError(
        option: curlOptionName(option),
        value: value(),
        code: Int32(code.rawValue),
        reason: String(cString: curl_easy_strerror(code))
    )
}

/// Checked setters for one easy handle's options.
struct CurlEasySetup {
    let easy: UnsafeMutableRawPointer

    /// Sets a `long` option.
    func set(_ option: CURLoption, _ value: Int) throws(CurlSetupError) {
        try checkSetup(ps_curl_easy_setopt_long(easy, option, value), option, String(value))
    }

    /// Sets a string option (libcurl copies it); nil resets the option to its default.
    func set(_ option: CURLoption, string value: String?) throws(CurlSetupError) {
        guard let value else {
            try checkSetup(ps_curl_easy_setopt_pointer(easy, option, nil), option, "NULL")
            return
        }
        let code = value.withCString { ps_curl_easy_setopt_string(easy, option, $0) }
        try checkSetup(code, option, "\"\(value)\"")
    }

    /// Sets an option that libcurl keeps as a pointer (it must outlive the handle's use of it).
    func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(CurlSetupError) {
        try checkSetup(ps_curl_easy_setopt_pointer(easy, option, value), option, value == nil ? "NULL" : "a pointer")
    }

    /// Sets a `curl_off_t` option.
    func set(_ option: CURLoption, offset value: Int) throws(CurlSetupError) {
        try checkSetup(ps_curl_easy_setopt_off_t(easy, option, curl_off_t(value)), option, String(value))
    }

    /// Checks the result of setting a callback option through its typed shim.
    func callback(_ option: CURLoption, _ code: CURLcode, isSet: Bool = true) throws(CurlSetupError) {
        try checkSetup(code, option, isSet ? "a callback" : "NULL")
    }
}

/// Checked setters for the multi handle's options (libcurl has no name table for these: the caller names them).
struct CurlMultiSetup {
    let multi: UnsafeMutableRawPointer

    /// Checks the result of a `curl_multi_setopt` (through a shim).
    /// - Throws: ``CurlSetupError`` naming `name` and `value` unless `code` is `CURLM_OK`.
    func check(_ code: CURLMcode, _ name: String, _ value: @autoclosure () -> String) throws(CurlSetupError) {
        guard code != CURLM_OK else { return }
        throw CurlSetupError(
            option: name,
            value: value(),
            code: Int32(code.rawValue),
            reason: String(cString: curl_multi_strerror(code))
        )
    }

    /// Sets a `long` option.
    func set(_ option: CURLMoption, _ name: String, _ value: Int) throws(CurlSetupError) {
        try check(ps_curl_multi_setopt_long(multi, option, value), name, String(value))
    }

    /// Sets a pointer option.
    func set(_ option: CURLMoption, _ name: String, pointer value: UnsafeMutableRawPointer?) throws(CurlSetupError) {
        try check(ps_curl_multi_setopt_pointer(multi, option, value), name, "a pointer")
    }
}
