/// A problem the structural scan of a JSON5 document found, with where it is.
struct JSON5Problem: Error, Equatable {
    /// What kind of problem it is.
    enum Kind: Equatable {
        /// The text is not JSON5.
        case syntax
        /// An object names the same key twice.
        case duplicateKey
    }

    var kind: Kind
    /// 1-based line of the offending character or key.
    var line: Int
    /// 1-based column, in Unicode scalars.
    var column: Int
    /// The JSON path reached when the problem was found (the duplicated key's own path for a duplicate).
    var path: String
    /// What was expected there, or what is wrong.
    var message: String
}

/// Walks a JSON5 document's structure without building values, to find what `JSONDecoder` does not report:
/// duplicated keys (it keeps one of them silently) and the line and column of a syntax error.
///
/// The scan is a second opinion, not the decoder: `Profile.decode` reports its syntax errors only when the
/// decoder also refused the text, so a scanner gap can never fail a profile the decoder accepts.
struct JSON5Scan {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var column = 1
    private var path: [PathComponent] = []

    private enum PathComponent {
        case key(String)
        case index(Int)
    }

    /// Documents nested deeper than this are refused rather than risking the stack.
    private static let maxDepth = 256

    /// Scans `bytes`; returns the first problem, or nil for a well-formed document with unique keys.
    static func firstProblem(in bytes: [UInt8]) -> JSON5Problem? {
        var scan = JSON5Scan(bytes: bytes)
        do {
            try scan.document()
            return nil
        } catch {
            return error
        }
    }

    private init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    // MARK: - Grammar

    private mutating func document() throws(JSON5Problem) {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        try skipSpace()
        guard index < bytes.count else { throw problem("a value, found the end of the file") }
        try value(depth: 0)
        try skipSpace()
        if index < bytes.count { throw problem("the end of the document, found \(found())") }
    }

    private mutating func value(depth: Int) throws(JSON5Problem) {
        guard depth < Self.maxDepth else { throw problem("at most \(Self.maxDepth) levels of nesting") }
        guard let byte = peek() else { throw problem("a value, found the end of the file") }
        switch byte {
        case UInt8(ascii: "{"): try object(depth: depth)
        case UInt8(ascii: "["): try array(depth: depth)
        case UInt8(ascii: "\""), UInt8(ascii: "'"): _ = try string()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
            UInt8(ascii: "I"), UInt8(ascii: "N"):
            try number()
        default: throw problem("a value, found \(found())")
        }
    }

    private mutating func object(depth: Int) throws(JSON5Problem) {
        advance()  // {
        var seen: [String: Int] = [:]
        while true {
            try skipSpace()
            guard let byte = peek() else { throw problem("a key or '}', found the end of the file") }
            if byte == UInt8(ascii: "}") {
                advance()
                return
            }
            let (keyLine, keyColumn) = (line, column)
            let key = try self.key()
            path.append(.key(key))
            if let first = seen[key] {
                throw JSON5Problem(
                    kind: .duplicateKey,
                    line: keyLine,
                    column: keyColumn,
                    path: renderedPath,
                    message: "each key once in an object, found '\(key)' again (first on line \(first))"
                )
            }
            seen[key] = keyLine
            try skipSpace()
            guard peek() == UInt8(ascii: ":") else { throw problem("':' after key '\(key)', found \(found())") }
            advance()
            try skipSpace()
            try value(depth: depth + 1)
            path.removeLast()
            try skipSpace()
            guard let next = peek() else { throw problem("',' or '}', found the end of the file") }
            if next == UInt8(ascii: ",") {
                advance()
            } else if next != UInt8(ascii: "}") {
                throw problem("',' or '}' after the value of '\(key)', found \(found())")
            }
        }
    }

    private mutating func array(depth: Int) throws(JSON5Problem) {
        advance()  // [
        var count = 0
        while true {
            try skipSpace()
            guard let byte = peek() else { throw problem("a value or ']', found the end of the file") }
            if byte == UInt8(ascii: "]") {
                advance()
                return
            }
            path.append(.index(count))
            try value(depth: depth + 1)
            path.removeLast()
            count += 1
            try skipSpace()
            guard let next = peek() else { throw problem("',' or ']', found the end of the file") }
            if next == UInt8(ascii: ",") {
                advance()
            } else if next != UInt8(ascii: "]") {
                throw problem("',' or ']' after an array element, found \(found())")
            }
        }
    }

    /// A quoted string or an identifier name, decoded so that `a`, `"a"` and `'a'` compare equal.
    private mutating func key() throws(JSON5Problem) -> String {
        guard let byte = peek() else { throw problem("a key, found the end of the file") }
        if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") { return try string() }
        guard Self.isIdentifierStart(byte) else { throw problem("a key or '}', found \(found())") }
        let start = index
        while let next = peek(), Self.isIdentifierStart(next) || Self.isDigit(next) { advance() }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func string() throws(JSON5Problem) -> String {
        let quote = bytes[index]
        advance()
        var decoded: [UInt8] = []
        while true {
            guard let byte = peek() else {
                throw problem("a closing \(quote == 0x22 ? "\"" : "'"), found the end of the file")
            }
            if byte == quote {
                advance()
                return String(decoding: decoded, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                throw problem("a closing quote before the end of the line (escape a line break as \\n)")
            }
            guard byte == UInt8(ascii: "\\") else {
                decoded.append(byte)
                advance()
                continue
            }
            advance()
            guard let escaped = peek() else { throw problem("an escaped character, found the end of the file") }
            switch escaped {
            case UInt8(ascii: "n"): decoded.append(0x0A)
            case UInt8(ascii: "t"): decoded.append(0x09)
            case UInt8(ascii: "r"): decoded.append(0x0D)
            case UInt8(ascii: "b"): decoded.append(0x08)
            case UInt8(ascii: "f"): decoded.append(0x0C)
            case UInt8(ascii: "v"): decoded.append(0x0B)
            case UInt8(ascii: "0"): decoded.append(0)
            case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                // A line continuation: the escaped line break is not part of the string.
                if escaped == UInt8(ascii: "\r") && peek(at: 1) == UInt8(ascii: "\n") { advance() }
            case UInt8(ascii: "x"), UInt8(ascii: "u"):
                let digits = escaped == UInt8(ascii: "x") ? 2 : 4
                var scalar: UInt32 = 0
                for offset in 1...digits {
                    guard let digit = peek(at: offset).flatMap(Self.hexValue) else {
                        throw problem("\(digits) hex digits after \\\(Character(Unicode.Scalar(escaped)))")
                    }
                    scalar = scalar * 16 + digit
                }
                for _ in 0..<digits { advance() }
                let character = Unicode.Scalar(scalar).map(Character.init) ?? "\u{FFFD}"
                decoded.append(contentsOf: String(character).utf8)
            default:
                // JSON5: any other escaped character stands for itself.
                decoded.append(escaped)
            }
            advance()
        }
    }

    private mutating func literal(_ word: String) throws(JSON5Problem) {
        for (offset, byte) in word.utf8.enumerated() where peek(at: offset) != byte {
            throw problem("a value, found \(found())")
        }
        for _ in word.utf8 { advance() }
        if let next = peek(), Self.isIdentifierStart(next) || Self.isDigit(next) {
            throw problem("a value, found \(found())")
        }
    }

    private mutating func number() throws(JSON5Problem) {
        if peek() == UInt8(ascii: "-") || peek() == UInt8(ascii: "+") { advance() }
        if peek() == UInt8(ascii: "I") {
            try literal("Infinity")
            return
        }
        if peek() == UInt8(ascii: "N") {
            try literal("NaN")
            return
        }
        if peek() == UInt8(ascii: "0"), let x = peek(at: 1), x == UInt8(ascii: "x") || x == UInt8(ascii: "X") {
            advance()
            advance()
            guard peek().flatMap(Self.hexValue) != nil else { throw problem("hex digits after 0x, found \(found())") }
            while peek().flatMap(Self.hexValue) != nil { advance() }
        } else {
            var digits = skipDigits()
            if peek() == UInt8(ascii: ".") {
                advance()
                digits += skipDigits()
            }
            guard digits > 0 else { throw problem("a number, found \(found())") }
            if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
                advance()
                if peek() == UInt8(ascii: "-") || peek() == UInt8(ascii: "+") { advance() }
                guard skipDigits() > 0 else { throw problem("exponent digits, found \(found())") }
            }
        }
        if let next = peek(), Self.isIdentifierStart(next) || Self.isDigit(next) || next == UInt8(ascii: ".") {
            throw problem("a number, found \(found())")
        }
    }

    private mutating func skipDigits() -> Int {
        var count = 0
        while let byte = peek(), Self.isDigit(byte) {
            advance()
            count += 1
        }
        return count
    }

    /// Skips white space, line breaks and comments.
    private mutating func skipSpace() throws(JSON5Problem) {
        while let byte = peek() {
            switch byte {
            case 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20:
                advance()
            case UInt8(ascii: "/") where peek(at: 1) == UInt8(ascii: "/"):
                while let next = peek(), next != 0x0A, next != 0x0D { advance() }
            case UInt8(ascii: "/") where peek(at: 1) == UInt8(ascii: "*"):
                let (startLine, startColumn) = (line, column)
                advance()
                advance()
                while !(peek() == UInt8(ascii: "*") && peek(at: 1) == UInt8(ascii: "/")) {
                    guard peek() != nil else {
                        throw JSON5Problem(
                            kind: .syntax,
                            line: startLine,
                            column: startColumn,
                            path: renderedPath,
                            message: "'*/' to close this comment, found the end of the file"
                        )
                    }
                    advance()
                }
                advance()
                advance()
            case 0xC2 where peek(at: 1) == 0xA0:  // no-break space
                advance()
                advance()
            case 0xEF where peek(at: 1) == 0xBB && peek(at: 2) == 0xBF:  // byte order mark
                for _ in 0..<3 { advance() }
            case 0xE2 where peek(at: 1) == 0x80 && (peek(at: 2) == 0xA8 || peek(at: 2) == 0xA9):
                // Line and paragraph separators.
                for _ in 0..<3 { advance() }
            default:
                return
            }
        }
    }

    // MARK: - Reading

    private func peek(at offset: Int = 0) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    /// Moves one byte on, counting lines (a CR LF pair is one break) and columns in Unicode scalars.
    private mutating func advance() {
        let byte = bytes[index]
        index += 1
        if byte == 0x0A || (byte == 0x0D && peek() != 0x0A) {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 && byte != 0x0D {
            column += 1
        }
    }

    /// The next character, quoted, for messages.
    private func found() -> String {
        guard index < bytes.count else { return "the end of the file" }
        var end = index + 1
        while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
        let text = String(decoding: bytes[index..<end], as: UTF8.self)
        switch text {
        case "\n", "\r": return "a line break"
        case "\t": return "a tab"
        default:
            // A control byte (a NUL in a binary file) printed as itself would garble the one line of the error.
            guard let scalar = text.unicodeScalars.first, scalar.value >= 0x20, scalar.value != 0x7F,
                scalar != "\u{FFFD}"
            else {
                let hex = String(bytes[index], radix: 16, uppercase: true)
                return "the byte 0x" + (hex.count == 1 ? "0" : "") + hex + " (not text)"
            }
            return "'\(text)'"
        }
    }

    private func problem(_ message: String) -> JSON5Problem {
        JSON5Problem(kind: .syntax, line: line, column: column, path: renderedPath, message: message)
    }

    private var renderedPath: String {
        var out = ""
        for component in path {
            switch component {
            case .key(let key): out += out.isEmpty ? key : "." + key
            case .index(let index): out += "[\(index)]"
            }
        }
        return out
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// ASCII letters, `$`, `_`, and any non-ASCII byte (identifiers may use Unicode letters).
    private static func isIdentifierStart(_ byte: UInt8) -> Bool {
        (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z")) || byte == UInt8(ascii: "$")
            || byte == UInt8(ascii: "_") || byte >= 0x80
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}
