internal import AppStoreModel
import HTTPServer
import Primitives

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

/// Why a webhook body yields no verified notification.
enum BodyProblem: Error {
    /// The body is not `{"signedPayload": "<string>"}` (400).
    case badRequest(String)
    /// The verifier refused the JWS (422, or 503 when retryable).
    case rejected(Rejection)
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

    /// Verifies the notification of a webhook body. The body as Apple (and `Minter`) writes it,
    /// `{"signedPayload":"<JWS>"}`, goes to the verifier as the bytes between the quotes, with no parser and no
    /// `String`: the verifier accepts only base64url, `=` and dots, which JSON never escapes, so a JWS it accepts
    /// there is the body's string. Its refusal stands when those bytes are plain (base64url and dots); anything
    /// else (an escape, say) is parsed as JSON and the string verified, as before there was a fast path.
    /// - Parameter verified: counts the JWS verified.
    func notification(
        in body: [UInt8],
        verified: inout Int
    ) -> Result<ResponseBodyV2DecodedPayload, BodyProblem> {
        let fast = body.withUnsafeBufferPointer { bytes -> Result<ResponseBodyV2DecodedPayload, Rejection>? in
            guard let span = Self.plainSpan(bytes) else { return nil }
            let result = verifier.notification(utf8: span)
            if case .failure = result, !Self.isPlainJWS(span) { return nil }
            return result
        }
        if let fast {
            verified += 1
            return fast.mapError(BodyProblem.rejected)
        }
        guard let object = jsonObject(body) else { return .failure(.badRequest("body is not a JSON object")) }
        guard let text = object["signedPayload"]?.stringValue else {
            return .failure(.badRequest("missing string field signedPayload"))
        }
        verified += 1
        return verifier.notification(text).mapError(BodyProblem.rejected)
    }

    /// The bytes between the quotes of a body framed as `{"signedPayload":"…"}` exactly; nil otherwise.
    static func plainSpan(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        let prefix = plainPrefix
        guard bytes.count > prefix.count + 2, bytes.starts(with: prefix),
            bytes[bytes.count - 2] == UInt8(ascii: "\""), bytes[bytes.count - 1] == UInt8(ascii: "}")
        else { return nil }
        return UnsafeBufferPointer(rebasing: bytes[prefix.count..<(bytes.count - 2)])
    }

    /// Whether every byte is base64url or a dot, so the span is a JSON string's text as it stands.
    static func isPlainJWS(_ span: UnsafeBufferPointer<UInt8>) -> Bool {
        // One table load per byte (a `switch` per byte of an array slice was 2.4% of the ledger's CPU).
        jwsAlphabet.withUnsafeBufferPointer { table in
            var ok = true
            for byte in span { ok = ok && table[Int(byte)] }
            return ok
        }
    }
}
