import Foundation
package import Primitives

/// One rendered request as PayStorm writes it to the request hook: a JSON line tagged with `id`.
///
/// ```json
/// {"id":7,"role":"deviceDelivery","kind":"device","method":"POST","url":"http://127.0.0.1:8000/purchases",
///  "headers":{"Content-Type":"application/json"},"body":"{\"jws\":\"eyJ…\"}",
///  "account":{"appAccountToken":"5F0C…","id":"user-5f0c","secret":"…"},
///  "transaction":{"id":"2000000000000007","originalId":"2000000000000007","productId":"coins.100"}}
/// ```
package struct RequestHookRequest: Sendable, Equatable {
    /// The delivery's transaction, as the hook sees it (empty strings are left out of the line).
    package struct Transaction: Sendable, Equatable {
        package var id: String
        package var originalId: String
        package var productId: String

        package init(id: String, originalId: String, productId: String) {
            self.id = id
            self.originalId = originalId
            self.productId = productId
        }
    }

    /// The tag the answer repeats (unique among the requests awaiting an answer).
    package var id: Int
    /// The profile's role: `webhook`, `deviceDelivery` or `deviceReport`.
    package var role: String
    /// The request's kind in the report (`webhook`, `device`, `forged`, `network-fault`, `restart`).
    package var kind: String
    package var method: String
    package var url: String
    /// The headers in the order they would be sent.
    package var headers: [(name: String, value: String)]
    /// The body (UTF-8 text: JSON).
    package var body: [UInt8]
    /// `appAccountToken` and the account's provisioned fields (`id`, a token, a secret...).
    package var account: [String: String]
    /// The delivery's transaction; nil for a delivery without one.
    package var transaction: Transaction?

    package init(
        id: Int,
        role: String,
        kind: String,
        method: String,
        url: String,
        headers: [(name: String, value: String)],
        body: [UInt8],
        account: [String: String],
        transaction: Transaction?
    ) {
        self.id = id
        self.role = role
        self.kind = kind
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.account = account
        self.transaction = transaction
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.id == rhs.id && lhs.role == rhs.role && lhs.kind == rhs.kind && lhs.method == rhs.method
            && lhs.url == rhs.url && lhs.body == rhs.body && lhs.account == rhs.account
            && lhs.transaction == rhs.transaction && lhs.headers.elementsEqual(rhs.headers, by: { $0 == $1 })
    }

    /// The request as one JSON line, newline included; keys of `headers` and `account` in sorted order.
    package var line: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(body.count + 512)
        out += Array(#"{"id":\#(id),"role":"#.utf8)
        Self.string(role, to: &out)
        out += Array(#","kind":"#.utf8)
        Self.string(kind, to: &out)
        out += Array(#","method":"#.utf8)
        Self.string(method, to: &out)
        out += Array(#","url":"#.utf8)
        Self.string(url, to: &out)
        out += Array(#","headers":"#.utf8)
        Self.object(headers.map { ($0.name, $0.value) }, to: &out)
        out += Array(#","body":"#.utf8)
        Self.string(String(decoding: body, as: UTF8.self), to: &out)
        out += Array(#","account":"#.utf8)
        Self.object(account.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, to: &out)
        if let transaction {
            out += Array(#","transaction":"#.utf8)
            let fields = [("id", transaction.id), ("originalId", transaction.originalId)]
            Self.object(fields.filter { !$0.1.isEmpty } + [("productId", transaction.productId)], to: &out)
        }
        out += Array("}\n".utf8)
        return out
    }

    private static func string(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        JSONEscaping.append(value, to: &out)
        out.append(UInt8(ascii: "\""))
    }

    private static func object(_ fields: [(String, String)], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        for (index, (name, value)) in fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            string(name, to: &out)
            out.append(UInt8(ascii: ":"))
            string(value, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}

/// What the request hook answered for one request: the parts to replace and the headers and body fields to add.
package struct RequestHookAnswer: Sendable, Equatable {
    /// The request's tag.
    package var id: Int
    /// Replaces the method.
    package var method: String?
    /// Replaces the URL (same scheme, host and port only).
    package var url: String?
    /// Replaces every header.
    package var headers: [String: String]?
    /// Replaces the body.
    package var body: String?
    /// Headers added last, each replacing one of the same name (in any case).
    package var addHeaders: [String: String] = [:]
    /// Top-level fields set in the JSON object body (which is then written again, compact, keys sorted).
    package var setBodyFields: [String: JSONValue] = [:]
    /// The hook's refusal of this request: the run stops with it.
    package var error: String?

    /// The keys an answer may hold.
    package static let keys: Set = ["id", "method", "url", "headers", "body", "addHeaders", "setBodyFields", "error"]

    package init(id: Int) { self.id = id }

    /// Reads one answer line (without its newline).
    /// - Throws: ``RequestHookProtocolError`` saying what is wrong with the line.
    package static func decode(_ line: some Collection<UInt8>) throws(RequestHookProtocolError) -> RequestHookAnswer {
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(line))
        } catch {
            throw RequestHookProtocolError("not JSON: \(quoted(line))")
        }
        guard case .object(let fields) = value else {
            throw RequestHookProtocolError("not a JSON object: \(quoted(line))")
        }
        if let unknown = fields.keys.sorted().first(where: { !keys.contains($0) }) {
            throw RequestHookProtocolError(
                "unknown key \"\(unknown)\" (an answer holds \(keys.sorted().joined(separator: ", ")))"
            )
        }
        guard let tag = fields["id"]?.int64Value, let id = Int(exactly: tag) else {
            throw RequestHookProtocolError("no integer \"id\": \(quoted(line))")
        }
        var answer = RequestHookAnswer(id: id)
        answer.method = try string(fields, "method", id: id)
        answer.url = try string(fields, "url", id: id)
        answer.body = try string(fields, "body", id: id)
        answer.error = try string(fields, "error", id: id)
        answer.headers = try strings(fields, "headers", id: id)
        answer.addHeaders = try strings(fields, "addHeaders", id: id) ?? [:]
        if let set = fields["setBodyFields"] {
            guard case .object(let values) = set else {
                throw RequestHookProtocolError("answer \(id): \"setBodyFields\" is not an object")
            }
            answer.setBodyFields = values
        }
        if let method = answer.method, method.isEmpty || !method.allSatisfy(\.isLetter) {
            throw RequestHookProtocolError("answer \(id): \"method\" is not an HTTP method: \"\(method)\"")
        }
        for (name, value) in (answer.headers ?? [:]).merging(answer.addHeaders, uniquingKeysWith: { $1 }) {
            try checkHeader(name, value, id: id)
        }
        return answer
    }

    private static func string(
        _ fields: [String: JSONValue],
        _ key: String,
        id: Int
    ) throws(RequestHookProtocolError)
        -> String?
    {
        guard let value = fields[key] else { return nil }
        guard let text = value.stringValue else {
            throw RequestHookProtocolError("answer \(id): \"\(key)\" is not a string")
        }
        return text
    }

    private static func strings(
        _ fields: [String: JSONValue],
        _ key: String,
        id: Int
    ) throws(RequestHookProtocolError)
        -> [String: String]?
    {
        guard let value = fields[key] else { return nil }
        guard case .object(let values) = value else {
            throw RequestHookProtocolError("answer \(id): \"\(key)\" is not an object of strings")
        }
        var out: [String: String] = [:]
        for (name, item) in values {
            guard let text = item.stringValue else {
                throw RequestHookProtocolError("answer \(id): \"\(key)\".\(name) is not a string")
            }
            out[name] = text
        }
        return out
    }

    /// A header PayStorm can send as it is: a token name, a value without line breaks or NUL.
    private static func checkHeader(_ name: String, _ value: String, id: Int) throws(RequestHookProtocolError) {
        let token = !name.isEmpty && name.unicodeScalars.allSatisfy { $0.isASCII && $0.value > 32 && $0 != ":" }
        guard token else { throw RequestHookProtocolError("answer \(id): header name \"\(name)\" is not a token") }
        guard !value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw RequestHookProtocolError("answer \(id): header \(name) has a line break or NUL in its value")
        }
    }

    /// The first 120 bytes of a line, for a message.
    static func quoted(_ line: some Collection<UInt8>) -> String {
        let text = String(decoding: line.prefix(120), as: UTF8.self)
        return "\"\(text)\"" + (line.count > 120 ? "…" : "")
    }

    /// The request to send: `request`'s parts with this answer's applied.
    /// - Throws: ``RequestHookProtocolError`` when the URL leaves the request's origin or body fields are set on a
    ///   body that is not a JSON object.
    package func applied(to request: RequestHookRequest) throws(RequestHookProtocolError) -> RequestHookRequest {
        var out = request
        if let method { out.method = method }
        if let url {
            guard let origin = Self.origin(of: url), origin == Self.origin(of: request.url) else {
                throw RequestHookProtocolError(
                    "answer \(id): \"url\" \"\(url)\" is not on the request's scheme, host and port (\(request.url))"
                )
            }
            out.url = url
        }
        if let headers { out.headers = headers.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } }
        if let body { out.body = Array(body.utf8) }
        for (name, value) in addHeaders.sorted(by: { $0.key < $1.key }) {
            out.headers.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            out.headers.append((name, value))
        }
        if !setBodyFields.isEmpty {
            guard case .object(var fields)? = try? JSONDecoder().decode(JSONValue.self, from: Data(out.body)) else {
                throw RequestHookProtocolError("answer \(id): \"setBodyFields\" on a body that is not a JSON object")
            }
            fields.merge(setBodyFields) { $1 }
            out.body = Array(JSONValue.object(fields).jsonText.utf8)
        }
        return out
    }

    /// `scheme://host:port` of a URL, the port made explicit.
    private static func origin(of url: String) -> String? {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), let host = parts.host
        else { return nil }
        return "\(scheme)://\(host.lowercased()):\(parts.port ?? (scheme == "https" ? 443 : 80))"
    }
}

/// What is wrong with a line the request hook wrote.
package struct RequestHookProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) { self.description = description }
}
