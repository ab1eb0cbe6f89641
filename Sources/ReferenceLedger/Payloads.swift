internal import AppStoreModel
internal import Foundation

// The ledger reads AppStoreModel's payloads (`ResponseBodyV2DecodedPayload`, `JWSTransactionDecodedPayload`,
// `JWSRenewalInfoDecodedPayload`) as the verifier decodes them: one model of Apple's payloads, no copy.

/// Why input was refused: a machine reason (the verifier's status when there is one) and one line.
struct Rejection: Error, Sendable, Equatable {
    var reason: String
    var detail: String
    /// True when the failure may pass on retry (OCSP unreachable): answered with 503, not 4xx.
    var retryable = false
}

/// Reads a JWS payload without checking anything: what a backend that trusts its input does.
enum UnverifiedJWS {
    static func decode<T: AppStoreJSONReadable>(_ type: T.Type, _ jws: String) -> Result<T, Rejection> {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = base64URLDecode(parts[1]) else {
            return .failure(Rejection(reason: "INVALID_JWT_FORMAT", detail: "not a compact JWS"))
        }
        // The plain shape without JSONDecoder, as the real verifier reads it; anything else through the decoder.
        if let value = bytes.withUnsafeBufferPointer({ AppStoreJSON.read(T.self, from: $0) }) {
            return .success(value)
        }
        do {
            return .success(try AppStoreJSON.decoder().decode(T.self, from: Foundation.Data(bytes)))
        } catch {
            return .failure(Rejection(reason: "INVALID_JWT_FORMAT", detail: "payload JSON does not decode"))
        }
    }

    static func base64URLDecode(_ text: Substring) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Foundation.Data(base64Encoded: base64).map { Array($0) }
    }
}
