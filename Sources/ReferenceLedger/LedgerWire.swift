import HTTPServer

// The bytes of the webhook's hot path, read and written without Foundation's JSON: every delivery passes
// through both, and `JSONEncoder` alone cost more per answer than the SQLite statements of a renewal.

/// The answer to a delivery: `{"granted":N,"status":"…"}`, keys sorted as `HTTPResponse.json` sorts them.
struct CommitBody: Encodable {
    var status: String
    var granted: Int

    /// The response, written by hand; `status` is one of the ledger's own words, never escaped. The
    /// bytes equal `HTTPResponse.json(status, self)` (a test compares them).
    func response(_ code: Int) -> HTTPResponse {
        var body: [UInt8] = []
        body.reserveCapacity(48)
        body.append(contentsOf: #"{"granted":"#.utf8)
        body.append(contentsOf: String(granted).utf8)
        body.append(contentsOf: #","status":""#.utf8)
        body.append(contentsOf: status.utf8)
        body.append(contentsOf: #""}"#.utf8)
        return HTTPResponse(status: code, headers: ["Content-Type": "application/json"], body: body)
    }
}

extension ReferenceLedger {
    private static let plainPrefix = Array(#"{"signedPayload":""#.utf8)

    /// The bytes a JWS may hold: base64url and dots.
    private static let jwsAlphabet: [Bool] = (0...255).map { value in
        switch UInt8(value) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// The webhook body exactly as Apple (and `Minter`) writes it, `{"signedPayload":"<JWS>"}`, read without a
    /// JSON parser: a JWS is base64url and dots, so it never needs escaping. Anything else goes to the parser.
    static func plainSignedPayload(_ body: [UInt8]) -> String? {
        body.withUnsafeBufferPointer { bytes -> String? in
            let prefix = plainPrefix
            guard bytes.count > prefix.count + 2, bytes.starts(with: prefix),
                bytes[bytes.count - 2] == UInt8(ascii: "\""), bytes[bytes.count - 1] == UInt8(ascii: "}")
            else { return nil }
            let jws = UnsafeBufferPointer(rebasing: bytes[prefix.count..<(bytes.count - 2)])
            // One table load per byte over ~12 KB (a `switch` per byte of an array slice was 2.4% of the
            // ledger's CPU).
            let plain = jwsAlphabet.withUnsafeBufferPointer { table in
                var ok = true
                for byte in jws { ok = ok && table[Int(byte)] }
                return ok
            }
            return plain ? String(decoding: jws, as: UTF8.self) : nil
        }
    }
}
