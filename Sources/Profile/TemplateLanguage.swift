import Primitives

/// One `{name}` of a request template.
public enum Placeholder: Sendable, Hashable {
    /// `{signedPayload}`: the notification JWS (webhook only).
    case signedPayload
    /// `{signedTransaction}`: the transaction JWS (device delivery only).
    case signedTransaction
    /// `{appAccountToken}`: the account's UUID as minted (uppercase).
    case appAccountToken
    /// `{appAccountToken.lower}`.
    case appAccountTokenLower
    /// `{appAccountToken.upper}`.
    case appAccountTokenUpper
    /// `{productId}` of the delivery's transaction (empty when it has none).
    case productId
    /// `{transactionId}` of the delivery's transaction (empty when it has none).
    case transactionId
    /// `{originalTransactionId}` of the delivery's transaction (empty when it has none).
    case originalTransactionId
    /// `{purchaseResult}`: the device report's result after the template's value map (device report only).
    case purchaseResult
    /// `{appReceipt}`: the account's app receipt in base64 as the device holds it at the request (device roles'
    /// bodies only).
    case appReceipt
    /// `{account.NAME}`: a field of the account in the backend; `id` defaults to the `appAccountToken`.
    case account(String)

    /// Parses the name between the braces; nil when it is not one of the placeholders.
    init?(name: String) {
        switch name {
        case "signedPayload": self = .signedPayload
        case "signedTransaction": self = .signedTransaction
        case "appAccountToken": self = .appAccountToken
        case "appAccountToken.lower": self = .appAccountTokenLower
        case "appAccountToken.upper": self = .appAccountTokenUpper
        case "productId": self = .productId
        case "transactionId": self = .transactionId
        case "originalTransactionId": self = .originalTransactionId
        case "purchaseResult": self = .purchaseResult
        case "appReceipt": self = .appReceipt
        default:
            let field = name.dropFirst("account.".count)
            guard name.hasPrefix("account."), !field.isEmpty,
                field.utf8.allSatisfy({ Self.isNameByte($0) && $0 != UInt8(ascii: ".") })
            else { return nil }
            self = .account(String(field))
        }
    }

    /// The role a placeholder is limited to, or nil when every role has it.
    var onlyRole: RequestRole? {
        switch self {
        case .signedPayload: .webhook
        case .signedTransaction: .deviceDelivery
        case .purchaseResult: .deviceReport
        default: nil
        }
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// Every name the templates accept, for error messages.
    static let names =
        "{signedPayload}, {signedTransaction}, {appAccountToken}, {appAccountToken.lower}, {appAccountToken.upper}, "
        + "{productId}, {transactionId}, {originalTransactionId}, {purchaseResult}, {appReceipt}, {account.id}, "
        + "{account.NAME}"
}

/// What one delivery puts into its template's placeholders.
public struct TemplateValues: Sendable {
    /// The JWS: the notification's for a webhook, the transaction's for a device delivery.
    public var signed: String
    /// The account's `appAccountToken` as minted.
    public var appAccountToken: String
    /// The product of the delivery's transaction, or empty.
    public var productId: String
    /// The delivery's transaction, or empty.
    public var transactionId: String
    /// The delivery's original transaction, or empty.
    public var originalTransactionId: String
    /// A device report's result as the world says it (`pending`, `userCancelled`, `success`), before the map.
    public var purchaseResult: String
    /// The account's fields in the backend (from ``AccountDirectory``); `id` defaults to the token.
    public var account: [String: String]
    /// The account's app receipt in base64 (device roles), or empty.
    public var appReceipt: String

    /// Creates values; absent ones are empty.
    public init(
        signed: String = "",
        appAccountToken: String,
        productId: String = "",
        transactionId: String = "",
        originalTransactionId: String = "",
        purchaseResult: String = "",
        account: [String: String] = [:],
        appReceipt: String = ""
    ) {
        self.signed = signed
        self.appAccountToken = appAccountToken
        self.productId = productId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.purchaseResult = purchaseResult
        self.account = account
        self.appReceipt = appReceipt
    }

    func value(of placeholder: Placeholder, resultMap: [String: String]) -> String {
        switch placeholder {
        case .signedPayload, .signedTransaction: signed
        case .appAccountToken: appAccountToken
        case .appAccountTokenLower: appAccountToken.lowercased()
        case .appAccountTokenUpper: appAccountToken.uppercased()
        case .productId: productId
        case .transactionId: transactionId
        case .originalTransactionId: originalTransactionId
        case .purchaseResult: resultMap[purchaseResult] ?? purchaseResult
        case .appReceipt: appReceipt
        case .account(let field): account[field] ?? (field == "id" ? appAccountToken : "")
        }
    }
}

/// A string with placeholders, split once into literal pieces and slots (a URL, a header value).
public struct TemplateString: Sendable, Hashable, CustomStringConvertible {
    enum Piece: Sendable, Hashable {
        case literal(String)
        case slot(Placeholder)
    }

    /// How substituted values are written.
    public enum Encoding: Sendable {
        /// Percent-encoded: everything but RFC 3986's unreserved characters (URLs).
        case url
        /// As they are, without control characters (header values: a value cannot add a header line).
        case header
        /// As they are (command arguments).
        case raw
    }

    let pieces: [Piece]
    /// The text as written.
    public let text: String

    /// Splits `text`; `{name}` must name a placeholder.
    /// - Throws: ``TemplateError`` with the offending name.
    public init(_ text: String) throws(TemplateError) {
        self.text = text
        var pieces: [Piece] = []
        var literal = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            literal += rest[..<open]
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: "}"),
                rest[afterOpen..<close].utf8.allSatisfy(Placeholder.isNameByte), afterOpen < close
            else {
                // Not a `{name}`: a literal brace (JSON inside a string, say).
                literal += "{"
                rest = rest[afterOpen...]
                continue
            }
            let name = String(rest[afterOpen..<close])
            guard let placeholder = Placeholder(name: name) else {
                throw TemplateError("a known placeholder (\(Placeholder.names)), found unknown placeholder {\(name)}")
            }
            if !literal.isEmpty { pieces.append(.literal(literal)) }
            literal = ""
            pieces.append(.slot(placeholder))
            rest = rest[rest.index(after: close)...]
        }
        literal += rest
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        self.pieces = pieces
    }

    /// The placeholders used, in order.
    public var placeholders: [Placeholder] {
        pieces.compactMap { if case .slot(let p) = $0 { p } else { nil } }
    }

    /// The literal text before the first placeholder.
    public var literalPrefix: String {
        if case .literal(let text)? = pieces.first { return text }
        return ""
    }

    /// Substitutes `values`.
    public func render(_ values: TemplateValues, encoding: Encoding, resultMap: [String: String] = [:]) -> String {
        var out = ""
        for piece in pieces {
            switch piece {
            case .literal(let text): out += text
            case .slot(let placeholder):
                let value = values.value(of: placeholder, resultMap: resultMap)
                switch encoding {
                case .url: out += Self.percentEncoded(value)
                case .header: out += String(value.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F })
                case .raw: out += value
                }
            }
        }
        return out
    }

    /// `value` with every byte outside RFC 3986's unreserved set (`A-Z a-z 0-9 - . _ ~`) as `%XX`.
    public static func percentEncoded(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(upperHex[Int(byte >> 4)])
                out.append(upperHex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let upperHex = Array("0123456789ABCDEF".utf8)

    /// The text as written.
    public var description: String { text }
}

/// A JSON body template compiled once into literal bytes and slots, so rendering a delivery's body copies the
/// literals and escapes only the substituted values: no JSON encoding per delivery.
public struct BodyTemplate: Sendable, Hashable {
    enum Piece: Sendable, Hashable {
        case literal([UInt8])
        /// A body string that is exactly one placeholder: the value's JSON string, quotes included.
        case string(Placeholder)
        /// A placeholder inside a longer string: the value escaped, the quotes being in the literals.
        case inside(Placeholder)
    }

    let pieces: [Piece]
    /// Placeholders by the JSON path of the string that holds them (for the profile's checks).
    let uses: [(path: String, placeholder: Placeholder)]
    /// Bytes of the literal pieces, to size the output once.
    private let literalBytes: Int

    /// Compiles a JSON value; `path` names it in errors (such as `target.deviceDelivery.body`).
    /// - Throws: ``ProfileIssue`` naming the string with an unknown placeholder.
    init(_ json: JSONValue, path: String) throws {
        var pieces: [Piece] = []
        var uses: [(String, Placeholder)] = []
        var literal: [UInt8] = []
        func flush() {
            if !literal.isEmpty { pieces.append(.literal(literal)) }
            literal = []
        }
        func walk(_ value: JSONValue, _ at: String) throws {
            switch value {
            case .string(let text):
                let template: TemplateString
                do {
                    template = try TemplateString(text)
                } catch {
                    throw ProfileIssue(path: at, expected: error.message)
                }
                uses += template.placeholders.map { (at, $0) }
                if template.pieces.count == 1, case .slot(let only) = template.pieces[0] {
                    flush()
                    pieces.append(.string(only))
                    return
                }
                literal.append(UInt8(ascii: "\""))
                for piece in template.pieces {
                    switch piece {
                    case .literal(let text): JSONEscaping.append(text, to: &literal)
                    case .slot(let placeholder):
                        flush()
                        pieces.append(.inside(placeholder))
                    }
                }
                literal.append(UInt8(ascii: "\""))
            case .array(let items):
                literal.append(UInt8(ascii: "["))
                for (index, item) in items.enumerated() {
                    if index > 0 { literal.append(UInt8(ascii: ",")) }
                    try walk(item, "\(at)[\(index)]")
                }
                literal.append(UInt8(ascii: "]"))
            case .object(let fields):
                literal.append(UInt8(ascii: "{"))
                for (index, key) in fields.keys.sorted().enumerated() {
                    if index > 0 { literal.append(UInt8(ascii: ",")) }
                    literal += Array("\"\(JSONEscaping.escaped(key))\":".utf8)
                    try walk(fields[key]!, joinPath(at, key))
                }
                literal.append(UInt8(ascii: "}"))
            case .null, .bool, .number:
                literal += Array(value.jsonText.utf8)
            }
        }
        try walk(json, path)
        flush()
        self.pieces = pieces
        self.uses = uses
        literalBytes = pieces.reduce(0) { if case .literal(let bytes) = $1 { $0 + bytes.count } else { $0 } }
    }

    /// The body for `values`.
    public func render(_ values: TemplateValues, resultMap: [String: String] = [:]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(literalBytes + values.signed.utf8.count + values.appReceipt.utf8.count + 128)
        for piece in pieces {
            switch piece {
            case .literal(let bytes): out += bytes
            case .string(let placeholder):
                out.append(UInt8(ascii: "\""))
                JSONEscaping.append(values.value(of: placeholder, resultMap: resultMap), to: &out)
                out.append(UInt8(ascii: "\""))
            case .inside(let placeholder):
                JSONEscaping.append(values.value(of: placeholder, resultMap: resultMap), to: &out)
            }
        }
        return out
    }

    public static func == (a: BodyTemplate, b: BodyTemplate) -> Bool { a.pieces == b.pieces }
    public func hash(into hasher: inout Hasher) { hasher.combine(pieces) }
}

/// A template that cannot be compiled: one line saying why.
public struct TemplateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
