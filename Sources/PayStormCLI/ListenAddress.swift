import PayStorm
import RunControl

/// Listen addresses and the loopback rule, in one place for every command that binds or sends.
enum ListenAddress {
    /// Splits `HOST:PORT` or `[V6]:PORT`; `localhost` becomes 127.0.0.1.
    /// - Throws: `CLIError` with `.usage` naming the option (`flag`) and the text.
    static func parse(_ text: String, flag: String = "--listen") throws -> (host: String, port: UInt16) {
        var host: Substring
        var portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(after: close)...].drop(while: { $0 == ":" })
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            throw CLIError(.usage, "\(flag) expects HOST:PORT, got '\(text)'")
        }
        guard !host.isEmpty, let port = UInt16(portText) else {
            throw CLIError(.usage, "\(flag) expects HOST:PORT, got '\(text)'")
        }
        if host == "localhost" { host = "127.0.0.1" }
        return (String(host), port)
    }

    /// Whether a host name or address is on this machine's loopback (127.0.0.0/8, ::1, localhost).
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host.hasSuffix(".localhost") { return true }
        let parts = host.split(separator: ".")
        return parts.count == 4 && parts.first == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
