/// What a target URL written by the user (a profile's URLs once its variables are substituted, `paystorm load
/// --url`) must be, checked before anything is sent: a malformed URL is the user's mistake (64 or 65), not an
/// unreachable target (69).
public enum TargetURL {
    /// What the URL must be and what `text` holds instead, or nil when it is an `http://` or `https://` URL
    /// with a host, a port from 1 to 65535 when one is given, and only URL characters (others percent-encoded).
    public static func problem(_ text: String) -> String? {
        let shown = HeaderField.escaped(text)
        if let bad = text.unicodeScalars.first(where: { !isURLCharacter($0) }) {
            return "a URL of URL characters only (percent-encode others), found \"\(shown)\" "
                + "(\(HeaderField.describe(bad)))"
        }
        if let percent = badPercent(text) {
            return "a URL whose every % starts a %XX escape, found \"\(percent)\" in \"\(shown)\""
        }
        let lower = text.lowercased()
        let scheme = lower.hasPrefix("http://") ? "http://" : lower.hasPrefix("https://") ? "https://" : nil
        guard let scheme else { return "an http:// or https:// URL with a host, found \"\(shown)\"" }
        let rest = text.dropFirst(scheme.count)
        var authority = rest.prefix { !"/?#".contains($0) }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let host: Substring
        var port: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                return "an IPv6 host closed by ']', found \"\(shown)\""
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.hasPrefix(":") {
                port = after.dropFirst()
            } else if !after.isEmpty {
                return "':PORT' or nothing after an IPv6 host, found \"\(shown)\""
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { return "an http:// or https:// URL with a host, found \"\(shown)\"" }
        if let port {
            guard !port.isEmpty else {
                return "a port after ':' (an empty variable?), found \"\(shown)\""
            }
            guard port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(port),
                (1...65535).contains(number)
            else { return "a port from 1 to 65535, found \"\(port)\" in \"\(shown)\"" }
        }
        return nil
    }

    /// RFC 3986's unreserved and reserved characters, and `%`.
    private static func isURLCharacter(_ scalar: Unicode.Scalar) -> Bool {
        HeaderField.isASCII(scalar, alphanumericOr: "-._~:/?#[]@!$&'()*+,;=%")
    }

    /// The first `%` not followed by two hex digits, with what follows it, or nil.
    private static func badPercent(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "%") {
            let escape = bytes[(index + 1)..<min(index + 3, bytes.count)]
            if escape.count < 2
                || !escape.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 102) })
            {
                return "%" + String(decoding: escape, as: UTF8.self)
            }
        }
        return nil
    }
}
