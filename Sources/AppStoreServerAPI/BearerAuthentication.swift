import AppStoreModel
internal import Foundation
import Primitives
public import Signing

/// Checks the bearer token of an App Store Server API request as Apple does: an ES256 JWT whose header has
/// `alg` `ES256`, a `kid` and (if present) `typ` `JWT`, and whose claims have `iss`, `aud`
/// `appstoreconnect-v1`, `bid` equal to the app's bundle id and an `exp` in the future, at most 60 minutes
/// after `iat`.
///
/// `iat` may be absent: Apple's own `AppStoreServerAPIClient` (Python, Node, Java) sends none, and the App
/// Store answers it, so without `iat` the limit is 60 minutes from now. The signature is checked when a
/// public key is configured for the token's `kid`.
public struct BearerAuthentication: Sendable {
    private let bundleId: String
    private let keys: [String: ES256PublicKey]
    private let issuerId: String?

    /// Creates a checker.
    /// - Parameters:
    ///   - bundleId: the `bid` every token must carry.
    ///   - publicKeys: P-256 public keys (PEM) by key id; when any is given, a token must be signed by the key
    ///     of its `kid`.
    ///   - issuerId: the `iss` every token must carry; nil accepts any non-empty issuer.
    public init(bundleId: String, publicKeys: [String: ES256PublicKey] = [:], issuerId: String? = nil) {
        self.bundleId = bundleId
        self.keys = publicKeys
        self.issuerId = issuerId
    }

    /// Why a token was refused, in a word or two (for the log; Apple's 401 says nothing).
    public struct Refusal: Error, Sendable, Hashable, CustomStringConvertible {
        /// The reason.
        public var reason: String
        /// The reason.
        public var description: String { reason }
    }

    /// Checks the `Authorization` header of a request.
    /// - Parameters:
    ///   - authorization: the header's value, or nil when absent.
    ///   - nowSeconds: the current time in UNIX seconds.
    /// - Returns: the token's key id.
    /// - Throws: ``Refusal`` naming what is wrong.
    public func check(authorization: String?, nowSeconds: Int64) throws(Refusal) -> String {
        guard let authorization, authorization.hasPrefix("Bearer ") else { throw Refusal(reason: "no bearer token") }
        let token = String(authorization.dropFirst("Bearer ".count)).trimmingCharacters(in: .whitespaces)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = JWS.base64URLDecode(String(parts[0])),
            let claimBytes = JWS.base64URLDecode(String(parts[1])),
            let header = try? JSONDecoder().decode([String: JSONValue].self, from: Data(headerBytes)),
            let claims = try? JSONDecoder().decode([String: JSONValue].self, from: Data(claimBytes))
        else { throw Refusal(reason: "not a JWT") }
        guard header["alg"] == .string("ES256") else { throw Refusal(reason: "alg is not ES256") }
        guard case .string(let kid)? = header["kid"], !kid.isEmpty else { throw Refusal(reason: "no kid") }
        if let typ = header["typ"], typ != .string("JWT") { throw Refusal(reason: "typ is not JWT") }
        guard case .string(let iss)? = claims["iss"], !iss.isEmpty else { throw Refusal(reason: "no iss") }
        if let issuerId, iss != issuerId { throw Refusal(reason: "iss is not \(issuerId)") }
        guard claims["aud"] == .string("appstoreconnect-v1") else {
            throw Refusal(reason: "aud is not appstoreconnect-v1")
        }
        guard claims["bid"] == .string(bundleId) else { throw Refusal(reason: "bid is not \(bundleId)") }
        guard let exp = number(claims["exp"]) else { throw Refusal(reason: "no exp") }
        guard exp > nowSeconds else { throw Refusal(reason: "expired") }
        if let iatValue = claims["iat"] {
            guard let iat = number(iatValue) else { throw Refusal(reason: "iat is not a number") }
            guard exp - iat <= 3600 else { throw Refusal(reason: "exp is more than 60 minutes after iat") }
            guard iat <= nowSeconds + 60 else { throw Refusal(reason: "iat is in the future") }
        } else {
            guard exp - nowSeconds <= 3600 else { throw Refusal(reason: "exp is more than 60 minutes away") }
        }
        if !keys.isEmpty {
            guard let key = keys[kid] else { throw Refusal(reason: "unknown kid \(kid)") }
            guard key.verifies(compact: token) else { throw Refusal(reason: "bad signature") }
        }
        return kid
    }

    private func number(_ value: JSONValue?) -> Int64? {
        if let number = value?.int64Value { return number }
        guard let number = value?.doubleValue, number.isFinite, abs(number) < 1e15 else { return nil }
        return Int64(number)
    }
}
