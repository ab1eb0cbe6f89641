public import AppStoreModel
internal import COpenSSL
internal import CPayStormShims
internal import Foundation
internal import Synchronization

/// Why signed data was rejected, named exactly as Python's `VerificationStatus` members.
public struct VerificationStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The Python name, e.g. `VERIFICATION_FAILURE`.
    public var rawValue: String

    /// Creates a status from its Python name.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Bad JWS, `alg`, `x5c`, signature, chain, date or OID; also a payload that does not decode.
    public static let verificationFailure = VerificationStatus(rawValue: "VERIFICATION_FAILURE")
    /// The `bundleId` (or `appAppleId` in Production) is not the configured one.
    public static let invalidAppIdentifier = VerificationStatus(rawValue: "INVALID_APP_IDENTIFIER")
    /// No trusted root, or an `x5c` entry that is not standard base64 of a DER certificate.
    public static let invalidCertificate = VerificationStatus(rawValue: "INVALID_CERTIFICATE")
    /// The `x5c` header does not hold exactly three certificates.
    public static let invalidChainLength = VerificationStatus(rawValue: "INVALID_CHAIN_LENGTH")
    /// Defined by Apple's libraries; Python never raises it.
    public static let invalidChain = VerificationStatus(rawValue: "INVALID_CHAIN")
    /// The payload's environment is not the configured one.
    public static let invalidEnvironment = VerificationStatus(rawValue: "INVALID_ENVIRONMENT")
    /// An online (OCSP) check could not be completed; retrying may succeed.
    public static let retryableVerificationFailure = VerificationStatus(rawValue: "RETRYABLE_VERIFICATION_FAILURE")

    public var description: String { rawValue }
}

/// A rejection: the status Apple's Python library would give, and a human-readable cause.
public struct VerificationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The status, as Python names it.
    public var status: VerificationStatus
    /// What exactly failed (for logs and witnesses; not part of Apple's contract).
    public var detail: String

    /// Creates a rejection.
    public init(status: VerificationStatus, detail: String) {
        self.status = status
        self.detail = detail
    }

    public var description: String { "\(status.rawValue): \(detail)" }
}

/// A verifier configuration Apple's libraries refuse at construction.
public struct VerifierConfigurationError: Error, Sendable, CustomStringConvertible {
    /// What is wrong with the configuration.
    public var message: String

    public var description: String { message }
}

/// Verifies App Store signed data the way Apple's `SignedDataVerifier` (Python 3.1.2) does
/// (reference §2): `alg` ES256, exactly three `x5c` entries in standard base64, a chain from
/// `x5c[0]` and `x5c[1]` to a configured root under OpenSSL's X.509 strict mode at the payload's
/// `signedDate` (now with online checks, plus OCSP), both Apple OIDs, the ES256 signature with the leaf key,
/// PyJWT's registered-claim checks, then bundle, environment and (Production) app Apple ID.
///
/// Verified chains are cached by the JWS header (which holds the `x5c`), with the chain's
/// validity window, so a steady stream from one signer costs one signature check per JWS.
///
/// ```swift
/// let verifier = try SignedDataVerifier(rootCertificates: [pki.root.der], enableOnlineChecks: false,
///                                       environment: .sandbox, bundleId: "com.example", appAppleId: nil)
/// switch verifier.verifyAndDecodeTransaction(jws) { case .success(let t): ...; case .failure(let e): ... }
/// ```
public struct SignedDataVerifier: Sendable {
    /// The environment payloads must carry.
    public let environment: Environment
    /// The bundle payloads must carry.
    public let bundleId: String
    /// The app Apple ID Production payloads must carry.
    public let appAppleId: Int64?
    /// Whether the chain is checked at the current time and by OCSP.
    public let enableOnlineChecks: Bool
    private let chains: ChainVerifier

    /// Creates a verifier.
    /// - Parameters:
    ///   - rootCertificates: DER of each trusted root (PayStorm's test root).
    ///   - enableOnlineChecks: check validity at the current time instead of `signedDate`, and ask
    ///     the AIA-OCSP responder of the intermediate and the leaf (loopback responders only).
    ///   - environment: the environment payloads must carry.
    ///   - bundleId: the bundle payloads must carry.
    ///   - appAppleId: required for Production.
    /// - Throws: `VerifierConfigurationError` when the environment is Production and `appAppleId` is nil.
    public init(
        rootCertificates: [[UInt8]],
        enableOnlineChecks: Bool,
        environment: Environment,
        bundleId: String,
        appAppleId: Int64?
    ) throws {
        if environment == .production && appAppleId == nil {
            throw VerifierConfigurationError(message: "appAppleId is required when the environment is Production")
        }
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.enableOnlineChecks = enableOnlineChecks
        chains = try ChainVerifier(rootCertificates: rootCertificates)
    }

    /// Verifies and decodes a notification's `signedPayload` (nested JWS are NOT verified, as in Apple's libraries).
    public func verifyAndDecodeNotification(
        _ signedPayload: String
    ) -> Result<ResponseBodyV2DecodedPayload, VerificationError> {
        decode(signedPayload, as: ResponseBodyV2DecodedPayload.self).flatMap { payload in
            var bundle: String?
            var appleId: Int64?
            var payloadEnvironment: Environment?
            if let data = payload.data {
                (bundle, appleId, payloadEnvironment) = (data.bundleId, data.appAppleId, data.environment)
            } else if let summary = payload.summary {
                (bundle, appleId, payloadEnvironment) = (summary.bundleId, summary.appAppleId, summary.environment)
            } else if let token = payload.externalPurchaseToken {
                (bundle, appleId) = (token.bundleId, token.appAppleId)
                let sandbox = token.externalPurchaseId?.hasPrefix("SANDBOX") ?? false
                payloadEnvironment = sandbox ? .sandbox : .production
            } else if let app = payload.appData {
                (bundle, appleId, payloadEnvironment) = (app.bundleId, app.appAppleId, app.environment)
            }
            return checkIdentity(bundle: bundle, appAppleId: appleId, environment: payloadEnvironment, checkApp: true)
                .map { payload }
        }
    }

    /// Verifies and decodes a `signedTransactionInfo` (from a notification or a device).
    public func verifyAndDecodeTransaction(_ jws: String) -> Result<JWSTransactionDecodedPayload, VerificationError> {
        decode(jws, as: JWSTransactionDecodedPayload.self).flatMap { transaction in
            checkIdentity(bundle: transaction.bundleId, appAppleId: nil, environment: transaction.environment)
                .map { transaction }
        }
    }

    /// Verifies and decodes a `signedRenewalInfo` (no bundle check: renewal info carries none).
    public func verifyAndDecodeRenewalInfo(_ jws: String) -> Result<JWSRenewalInfoDecodedPayload, VerificationError> {
        decode(jws, as: JWSRenewalInfoDecodedPayload.self).flatMap { renewal in
            guard renewal.environment == environment else {
                return .failure(environmentMismatch(renewal.environment))
            }
            return .success(renewal)
        }
    }

    /// Verifies and decodes a signed `AppTransaction` (its `receiptType` is the environment).
    public func verifyAndDecodeAppTransaction(_ jws: String) -> Result<AppTransaction, VerificationError> {
        decode(jws, as: AppTransaction.self).flatMap { app in
            checkIdentity(
                bundle: app.bundleId,
                appAppleId: app.appAppleId,
                environment: app.receiptType,
                checkApp: true
            )
            .map { app }
        }
    }

    /// Verifies the signature and chain of any JWS and returns its payload bytes (no identity checks).
    public func verifiedPayload(_ jws: String) -> Result<[UInt8], VerificationError> {
        decode(jws, as: RawPayload.self).map { _ in
            let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
            return JWS.base64URLDecode(String(segments[1])) ?? []
        }
    }

    private func decode<T: Decodable>(_ jws: String, as type: T.Type) -> Result<T, VerificationError> {
        let skip = environment == .xcode || environment == .localTesting
        return chains.verify(jws, as: type, skipSignature: skip, onlineChecks: enableOnlineChecks)
    }

    private func checkIdentity(
        bundle: String?,
        appAppleId payloadAppleId: Int64?,
        environment payloadEnvironment: Environment?,
        checkApp: Bool = false
    ) -> Result<Void, VerificationError> {
        if bundle != bundleId {
            return .failure(
                VerificationError(
                    status: .invalidAppIdentifier,
                    detail: "bundleId \(bundle.map { "'\($0)'" } ?? "absent") is not '\(bundleId)'"
                )
            )
        }
        if checkApp && environment == .production && payloadAppleId != appAppleId {
            return .failure(
                VerificationError(
                    status: .invalidAppIdentifier,
                    detail: "appAppleId \(payloadAppleId.map(String.init) ?? "absent") is not \(appAppleId ?? 0)"
                )
            )
        }
        guard payloadEnvironment == environment else { return .failure(environmentMismatch(payloadEnvironment)) }
        return .success(())
    }

    private func environmentMismatch(_ payloadEnvironment: Environment?) -> VerificationError {
        VerificationError(
            status: .invalidEnvironment,
            detail:
                "environment \(payloadEnvironment.map { "'\($0.rawValue)'" } ?? "absent") is not '\(environment.rawValue)'"
        )
    }
}

/// The JWS and chain part of the verifier, shared by copies of a `SignedDataVerifier`.
final class ChainVerifier: Sendable {
    private let store: TrustStore?
    private let rootCount: Int
    /// Headers whose checks and chain passed, most recent last. A hit skips decoding the header
    /// and the chain, and starts the digest from the hashed header; the date window is rechecked.
    private let cache = Mutex<[CachedHeader]>([])
    private static let cacheLimit = 64

    init(rootCertificates: [[UInt8]]) throws {
        rootCount = rootCertificates.count
        store = try? TrustStore(rootCertificates)
    }

    /// Python's `_decode_signed_object` followed by decoding the payload as `T` (after every check,
    /// as Python structures the payload after the signature).
    func verify<T: Decodable>(
        _ jws: String,
        as type: T.Type,
        skipSignature: Bool,
        onlineChecks: Bool
    ) -> Result<T, VerificationError> {
        var jws = jws
        return jws.withUTF8 { text in
            verify(utf8: text, as: type, skipSignature: skipSignature, onlineChecks: onlineChecks)
        }
    }

    private func verify<T: Decodable>(
        utf8 text: UnsafeBufferPointer<UInt8>,
        as type: T.Type,
        skipSignature: Bool,
        onlineChecks: Bool
    ) -> Result<T, VerificationError> {
        // PyJWT: rsplit('.', 1) for the signature, then split('.', 1) for header and payload.
        guard let lastDot = text.lastIndex(of: UInt8(ascii: ".")),
            let firstDot = text[..<lastDot].firstIndex(of: UInt8(ascii: "."))
        else { return failure("the JWS does not have three segments") }
        let headerSegment = UnsafeBufferPointer(rebasing: text[..<firstDot])
        let payloadSegment = UnsafeBufferPointer(rebasing: text[(firstDot + 1)..<lastDot])
        let signatureSegment = text[(lastDot + 1)...]
        guard let payload = JWS.base64URLDecode(payloadSegment), let signature = JWS.base64URLDecode(signatureSegment)
        else { return failure("a JWS segment is not base64url") }
        let cached = skipSignature ? nil : lookup(headerSegment)
        var header = HeaderProbe()
        if cached == nil {
            guard let headerBytes = JWS.base64URLDecode(headerSegment) else {
                return failure("a JWS segment is not base64url")
            }
            guard let decoded = try? JSONDecoder().decode(HeaderProbe.self, from: Data(headerBytes)) else {
                return failure("the JWS header is not a JSON object of the expected shape")
            }
            header = decoded
        }
        // One JSON pass for the claims the checks need and the model; a model failure waits its turn.
        // A plain top level (the usual case) gives the claims from a byte scan, sparing the probe.
        let claims: ClaimsProbe
        let decodedModel: Result<T, any Error>
        if let plain = payload.withUnsafeBufferPointer({ PlainClaims.scan($0) }) {
            if let model = payload.withUnsafeBufferPointer({ Self.read(T.self, from: $0) }) {
                // The plain shape, read without JSONDecoder: the decoder would give the same value.
                (claims, decodedModel) = (plain, .success(model))
            } else {
                // The scan saw `{` first, and the decoder only reaches `init(from:)` for valid JSON.
                guard let decoded = try? JSONDecoder().decode(ModelOnly<T>.self, from: Data(payload)) else {
                    return failure("the JWS payload is not a JSON object")
                }
                (claims, decodedModel) = (plain, decoded.model)
            }
        } else {
            guard let decoded = try? JSONDecoder().decode(ClaimsAndModel<T>.self, from: Data(payload)) else {
                return failure("the JWS payload is not a JSON object")
            }
            (claims, decodedModel) = (decoded.claims, decoded.model)
        }
        let model = decodedModel.mapError { _ in
            // Python raises a raw cattrs error here; Swift's INVALID_JWT_FORMAT has no Python twin.
            VerificationError(status: .verificationFailure, detail: "payload does not decode as \(T.self)")
        }
        if skipSignature { return model }

        let now = Int64(Date().timeIntervalSince1970)
        let effective: Int64
        if onlineChecks {
            effective = now
        } else if let date = claims.signedDate ?? claims.receiptCreationDate {
            guard let milliseconds = date.integer else { return failure("signedDate is not an integer") }
            effective = floorDivide(milliseconds, 1000)
        } else {
            effective = now
        }

        let entry: CachedHeader
        if let cached, cached.chain.covers(effective), !onlineChecks || cached.chain.onlineCheckIsFresh(now: now) {
            entry = cached
        } else {
            if cached != nil {
                // A cached header at a date outside its window: decode it to give the full path its input.
                guard let headerBytes = JWS.base64URLDecode(headerSegment),
                    let decoded = try? JSONDecoder().decode(HeaderProbe.self, from: Data(headerBytes))
                else { return failure("the JWS header is not a JSON object of the expected shape") }
                header = decoded
            }
            guard let x5c = header.x5c, !x5c.isEmpty else { return failure("the x5c header is missing or empty") }
            guard header.alg == "ES256" else {
                return failure("alg is \(header.alg.map { "'\($0)'" } ?? "absent"), not ES256")
            }
            switch verifyChain(x5c, at: effective, onlineChecks: onlineChecks) {
            case .success(let chain):
                guard let fresh = try? CachedHeader(segment: Array(headerSegment), chain: chain) else {
                    return failure("cannot hash the JWS header")
                }
                entry = fresh
                remember(fresh)
            case .failure(let error): return .failure(error)
            }
        }

        // The signature: ES256 over the ASCII signing input, raw R||S with the P-256 leaf key.
        guard entry.chain.isP256, signature.count == 64, let der = p256DERSignature(fromRaw: signature) else {
            return failure("the signature is not a 64-byte ES256 signature from a P-256 leaf")
        }
        guard let digest = try? entry.prefixHash.digest(appending: payloadSegment) else {
            return failure("cannot hash the signing input")
        }
        let valid = (try? entry.chain.verifiers.withContext { $0.verifyDER(signature: der, digest: digest) }) ?? false
        guard valid else { return failure("the signature does not verify with the leaf key") }

        if let problem = claims.registeredClaimProblem(now: Date().timeIntervalSince1970) { return failure(problem) }
        return model
    }

    /// The model through `AppStoreJSON.read`, when `T` reads itself and the payload has the plain shape.
    private static func read<T>(_ type: T.Type, from bytes: UnsafeBufferPointer<UInt8>) -> T? {
        guard let readable = type as? any AppStoreJSONReadable.Type else { return nil }
        return AppStoreJSON.read(readable, from: bytes) as? T
    }

    private func lookup(_ segment: UnsafeBufferPointer<UInt8>) -> CachedHeader? {
        let entries = cache.withLock { $0 }
        for entry in entries.reversed() where entry.matches(segment) { return entry }
        return nil
    }

    private func remember(_ entry: CachedHeader) {
        cache.withLock { entries in
            entries.removeAll { $0.segment == entry.segment }
            if entries.count >= Self.cacheLimit { entries.removeFirst() }
            entries.append(entry)
        }
    }

    /// Python's `_ChainVerifier.verify_chain` (without caching; the caller caches).
    private func verifyChain(
        _ x5c: [String],
        at effective: Int64,
        onlineChecks: Bool
    ) -> Result<VerifiedChain, VerificationError> {
        guard rootCount > 0 else {
            return .failure(VerificationError(status: .invalidCertificate, detail: "no trusted root is configured"))
        }
        guard x5c.count == 3 else {
            return .failure(
                VerificationError(status: .invalidChainLength, detail: "x5c holds \(x5c.count) certificates, not 3")
            )
        }
        guard let store else {
            return .failure(
                VerificationError(status: .invalidCertificate, detail: "a trusted root is not a DER certificate")
            )
        }
        guard let leafDER = Data(base64Encoded: x5c[0]), let intermediateDER = Data(base64Encoded: x5c[1]),
            let leaf = try? Certificate(der: Array(leafDER)),
            let intermediate = try? Certificate(der: Array(intermediateDER))
        else {
            clearOpenSSLErrors()
            return .failure(
                VerificationError(
                    status: .invalidCertificate,
                    detail: "x5c[0] or x5c[1] is not standard base64 of a DER certificate"
                )
            )
        }
        return store.verify(leaf: leaf, intermediate: intermediate, at: effective, onlineChecks: onlineChecks)
    }
}

/// A header that passed every header and chain check, with its hashed signing-input prefix.
final class CachedHeader: Sendable {
    let segment: [UInt8]
    let chain: VerifiedChain
    let prefixHash: PrefixHash

    init(segment: [UInt8], chain: VerifiedChain) throws {
        self.segment = segment
        self.chain = chain
        prefixHash = try PrefixHash(segment + [UInt8(ascii: ".")])
    }

    func matches(_ other: UnsafeBufferPointer<UInt8>) -> Bool {
        guard other.count == segment.count else { return false }
        return segment.withUnsafeBufferPointer { memcmp($0.baseAddress!, other.baseAddress!, other.count) == 0 }
    }
}

/// The claims probe and the model, decoded from one parse of the payload.
private struct ClaimsAndModel<T: Decodable>: Decodable {
    var claims: ClaimsProbe
    var model: Result<T, any Error>

    init(from decoder: any Decoder) throws {
        claims = try ClaimsProbe(from: decoder)
        do {
            model = .success(try T(from: decoder))
        } catch {
            model = .failure(error)
        }
    }
}

/// The model alone, for payloads whose claims `PlainClaims` read.
private struct ModelOnly<T: Decodable>: Decodable {
    var model: Result<T, any Error>

    init(from decoder: any Decoder) throws {
        do {
            model = .success(try T(from: decoder))
        } catch {
            model = .failure(error)
        }
    }
}

/// Reads the claims of a payload whose top level is plain, without a JSON decode: the first
/// token is `{`, every top-level key is ASCII without escapes, no JWT claim (`exp`, `nbf`,
/// `iat`, `aud`, `sub`, `jti`) nor `receiptCreationDate` is present, and `signedDate` is absent
/// or present once as an integer literal of at most 18 digits. Anything else gives nil, and the
/// caller decodes `ClaimsProbe`, so the result is the probe's on every payload that decodes;
/// what the scan makes of invalid JSON never counts, as the decoder then rejects the payload.
enum PlainClaims {
    fileprivate static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> ClaimsProbe? {
        var scanner = Scanner(bytes: bytes)
        return scanner.claims()
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func claims() -> ClaimsProbe? {
            skipWhitespace()
            guard next(is: UInt8(ascii: "{")) else { return nil }
            skipWhitespace()
            if next(is: UInt8(ascii: "}")) { return ClaimsProbe(signedDate: nil) }
            var signedDate: Int64?
            while true {
                guard next(is: UInt8(ascii: "\"")), let key = plainKey() else { return nil }
                skipWhitespace()
                guard next(is: UInt8(ascii: ":")) else { return nil }
                skipWhitespace()
                switch key {
                case .signedDate:
                    guard signedDate == nil, let value = integer() else { return nil }
                    signedDate = value
                case .claim: return nil
                case .other: guard skipValue() else { return nil }
                }
                skipWhitespace()
                if next(is: UInt8(ascii: "}")) { return ClaimsProbe(signedDate: signedDate) }
                guard next(is: UInt8(ascii: ",")) else { return nil }
                skipWhitespace()
            }
        }

        private enum Key { case signedDate, claim, other }

        /// The key after its opening quote; nil for a key with an escape or a non-ASCII byte.
        private mutating func plainKey() -> Key? {
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let key = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    index += 1
                    return Self.kind(of: key)
                }
                guard byte != UInt8(ascii: "\\"), byte < 0x80 else { return nil }
                index += 1
            }
            return nil
        }

        private static func kind(of key: UnsafeBufferPointer<UInt8>) -> Key {
            if key.elementsEqual("signedDate".utf8) { return .signedDate }
            for name in ["exp", "nbf", "iat", "aud", "sub", "jti", "receiptCreationDate"]
            where key.elementsEqual(name.utf8) {
                return .claim
            }
            return .other
        }

        /// `-?[0-9]{1,18}` ending the value (no fraction or exponent).
        private mutating func integer() -> Int64? {
            let negative = next(is: UInt8(ascii: "-"))
            var value: Int64 = 0
            var digits = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                digits += 1
                index += 1
            }
            guard digits >= 1, digits <= 18, index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: ","), UInt8(ascii: "}"), 0x20, 0x09, 0x0A, 0x0D: return negative ? -value : value
            default: return nil
            }
        }

        /// Skips one value of any kind; false when the bytes end first.
        private mutating func skipValue() -> Bool {
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                return skipStringRest()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        index += 1
                        guard skipStringRest() else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 {
                            index += 1
                            return true
                        }
                    default: break
                    }
                    index += 1
                }
                return false
            default:
                // A number, true, false or null: up to the next delimiter.
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D: return true
                    default: index += 1
                    }
                }
                return false
            }
        }

        /// Skips a string's characters and closing quote (the opening quote is consumed).
        private mutating func skipStringRest() -> Bool {
            let start = index
            while index < bytes.count {
                guard let found = memchr(bytes.baseAddress! + index, Int32(UInt8(ascii: "\"")), bytes.count - index)
                else { return false }
                let quote = bytes.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
                var backslashes = 0
                while quote - backslashes - 1 >= start, bytes[quote - backslashes - 1] == UInt8(ascii: "\\") {
                    backslashes += 1
                }
                index = quote + 1
                if backslashes % 2 == 0 { return true }
            }
            return false
        }

        private mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        private mutating func next(is byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }
    }
}

/// The payload as raw bytes (for `verifiedPayload`): any JSON object decodes.
struct RawPayload: Decodable {
    init(from decoder: any Decoder) throws {}
}

private func failure<T>(_ detail: String) -> Result<T, VerificationError> {
    .failure(VerificationError(status: .verificationFailure, detail: detail))
}

/// DER `ECDSA-Sig-Value` of a 64-byte raw `R||S`, byte for byte what `derSignature(fromRaw:)` gets
/// from OpenSSL (minimal non-negative INTEGERs), without its four allocations; nil for another size.
func p256DERSignature(fromRaw raw: [UInt8]) -> [UInt8]? {
    guard raw.count == 64 else { return nil }
    return raw.withUnsafeBufferPointer { bytes in
        // Each half without leading zeros (at least one byte), then a 0x00 if its top bit is set.
        func integer(_ half: Range<Int>) -> (start: Int, pad: Bool) {
            var start = half.lowerBound
            while start < half.upperBound - 1 && bytes[start] == 0 { start += 1 }
            return (start, bytes[start] >= 0x80)
        }
        let r = integer(0..<32)
        let s = integer(32..<64)
        let rLength = 32 - r.start + (r.pad ? 1 : 0)
        let sLength = 64 - s.start + (s.pad ? 1 : 0)
        var der: [UInt8] = []
        der.reserveCapacity(6 + rLength + sLength)
        der.append(contentsOf: [0x30, UInt8(4 + rLength + sLength), 0x02, UInt8(rLength)])
        if r.pad { der.append(0) }
        der.append(contentsOf: bytes[r.start..<32])
        der.append(contentsOf: [0x02, UInt8(sLength)])
        if s.pad { der.append(0) }
        der.append(contentsOf: bytes[s.start..<64])
        return der
    }
}

private func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
    let quotient = value / divisor
    return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
}

/// A chain that verified: the leaf key and the window in which all three certificates are valid.
struct VerifiedChain: Sendable {
    let verifiers: PKeyContextPool
    let isP256: Bool
    /// Latest `notBefore` of leaf, intermediate and root (UNIX seconds, valid from it inclusive).
    let validFrom: Int64
    /// Earliest `notAfter` (valid strictly before it, as OpenSSL compares).
    let validUntil: Int64

    /// When OCSP last answered GOOD for this chain (UNIX seconds), if online checks ran.
    let onlineCheckedAt: Int64?

    func covers(_ time: Int64) -> Bool { time >= validFrom && time < validUntil }

    /// Python keeps an online-verified chain for 15 minutes.
    func onlineCheckIsFresh(now: Int64) -> Bool {
        guard let onlineCheckedAt else { return false }
        return now - onlineCheckedAt < 15 * 60
    }
}

/// The configured roots in an OpenSSL `X509_STORE` with `X509_V_FLAG_X509_STRICT`.
///
/// `@unchecked Sendable`: the store is filled in init and only read afterwards; OpenSSL locks
/// its lookups, and each verification uses its own `X509_STORE_CTX`.
final class TrustStore: @unchecked Sendable {
    let pointer: OpaquePointer
    private let roots: [Certificate]
    private let leafOID: OpaquePointer
    private let intermediateOID: OpaquePointer

    init(_ rootCertificates: [[UInt8]]) throws {
        roots = try rootCertificates.map { try Certificate(der: $0) }
        guard let store = X509_STORE_new() else { throw SigningError.openSSL("X509_STORE_new") }
        pointer = store
        for root in roots where X509_STORE_add_cert(store, root.pointer) != 1 {
            throw SigningError.openSSL("X509_STORE_add_cert")
        }
        X509_STORE_set_flags(store, UInt(X509_V_FLAG_X509_STRICT))
        guard let leafOID = OBJ_txt2obj(AppleOID.leaf, 1), let intermediateOID = OBJ_txt2obj(AppleOID.intermediate, 1)
        else { throw SigningError.openSSL("OBJ_txt2obj") }
        self.leafOID = leafOID
        self.intermediateOID = intermediateOID
    }

    deinit {
        X509_STORE_free(pointer)
        ASN1_OBJECT_free(leafOID)
        ASN1_OBJECT_free(intermediateOID)
    }

    func verify(
        leaf: Certificate,
        intermediate: Certificate,
        at time: Int64,
        onlineChecks: Bool
    ) -> Result<VerifiedChain, VerificationError> {
        guard let context = X509_STORE_CTX_new() else { return chainFailure("X509_STORE_CTX_new failed") }
        defer { X509_STORE_CTX_free(context) }
        guard let untrusted = ps_sk_X509_new_null() else { return chainFailure("sk_X509_new_null failed") }
        defer { ps_sk_X509_free(untrusted) }
        _ = ps_sk_X509_push(untrusted, intermediate.pointer)
        guard X509_STORE_CTX_init(context, pointer, leaf.pointer, untrusted) == 1 else {
            return chainFailure("X509_STORE_CTX_init failed")
        }
        X509_STORE_CTX_set_time(context, 0, time_t(time))
        guard X509_verify_cert(context) == 1 else {
            let code = X509_STORE_CTX_get_error(context)
            clearOpenSSLErrors()
            let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
            return chainFailure("chain verification failed: \(reason)")
        }
        guard let chain = X509_STORE_CTX_get0_chain(context), ps_sk_X509_num(chain) >= 2,
            let verifiedLeaf = ps_sk_X509_value(chain, 0), let verifiedIntermediate = ps_sk_X509_value(chain, 1)
        else { return chainFailure("the verified chain is shorter than leaf and intermediate") }
        guard X509_get_ext_by_OBJ(verifiedLeaf, leafOID, -1) >= 0 else {
            return chainFailure("the leaf lacks Apple's receipt-signing OID \(AppleOID.leaf)")
        }
        guard X509_get_ext_by_OBJ(verifiedIntermediate, intermediateOID, -1) >= 0 else {
            return chainFailure("the intermediate lacks Apple's intermediate OID \(AppleOID.intermediate)")
        }
        if onlineChecks {
            guard let root = ps_sk_X509_value(chain, ps_sk_X509_num(chain) - 1) else {
                return chainFailure("the verified chain has no root")
            }
            // As Python: the intermediate (issued by the root) first, then the leaf.
            if let error = OCSPClient.check(verifiedIntermediate, issuer: root, store: pointer) {
                return .failure(error)
            }
            if let error = OCSPClient.check(verifiedLeaf, issuer: verifiedIntermediate, store: pointer) {
                return .failure(error)
            }
        }
        var validFrom = Int64.min
        var validUntil = Int64.max
        for index in 0..<ps_sk_X509_num(chain) {
            guard let cert = ps_sk_X509_value(chain, index) else { continue }
            validFrom = max(validFrom, unixSeconds(X509_get0_notBefore(cert)))
            validUntil = min(validUntil, unixSeconds(X509_get0_notAfter(cert)))
        }
        guard let key = try? PublicKey(certificate: leaf.pointer) else {
            clearOpenSSLErrors()
            return chainFailure("the leaf public key cannot be read")
        }
        return .success(
            VerifiedChain(
                verifiers: PKeyContextPool(key: key, mode: .verify),
                isP256: curveOf(key.pointer) == .p256,
                validFrom: validFrom,
                validUntil: validUntil,
                onlineCheckedAt: onlineChecks ? Int64(Date().timeIntervalSince1970) : nil
            )
        )
    }

    private func chainFailure(_ detail: String) -> Result<VerifiedChain, VerificationError> {
        .failure(VerificationError(status: .verificationFailure, detail: detail))
    }
}

/// The header fields the verifier reads.
private struct HeaderProbe: Decodable {
    var alg: String?
    var x5c: [String]?
}

/// A JSON value read the way Python's `int()` reads it (numbers, numeric strings, booleans).
private struct LooseNumber: Decodable {
    var integer: Int64?
    var isNull = false

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            isNull = true
        } else if let value = try? container.decode(Int64.self) {
            integer = value
        } else if let value = try? container.decode(Double.self) {
            integer = value.isFinite && abs(value) < 9e18 ? Int64(value) : nil
        } else if let value = try? container.decode(Bool.self) {
            integer = value ? 1 : 0
        } else if let value = try? container.decode(String.self) {
            integer = Int64(value.trimmingCharacters(in: .whitespaces))
        }
    }
}

/// Any JSON value, reduced to what PyJWT's checks need: present, truthy, a string.
private struct LooseValue: Decodable {
    var isTruthy: Bool
    var isString: Bool

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        isString = false
        if container.decodeNil() {
            isTruthy = false
        } else if let value = try? container.decode(String.self) {
            (isTruthy, isString) = (!value.isEmpty, true)
        } else if let value = try? container.decode(Bool.self) {
            isTruthy = value
        } else if let value = try? container.decode(Double.self) {
            isTruthy = value != 0
        } else if let value = try? container.decode([LooseValue].self) {
            isTruthy = !value.isEmpty
        } else if let value = try? container.decode([String: LooseValue].self) {
            isTruthy = !value.isEmpty
        } else {
            isTruthy = true
        }
    }
}

/// The payload fields the verifier reads before the model: the effective date and JWT claims.
private struct ClaimsProbe: Decodable {
    var signedDate: LooseNumber?
    var receiptCreationDate: LooseNumber?
    var exp: LooseNumber?
    var nbf: LooseNumber?
    var iat: LooseNumber?
    var aud: LooseValue?
    var sub: LooseValue?
    var jti: LooseValue?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        func number(_ key: Keys) -> LooseNumber? {
            guard let value = try? container.decode(LooseNumber.self, forKey: key), !value.isNull else { return nil }
            return value
        }
        signedDate = number(.signedDate)
        receiptCreationDate = number(.receiptCreationDate)
        // The JWT claims count even when null: PyJWT checks `"exp" in payload`, then int(None) fails.
        exp = container.contains(.exp) ? (try? container.decode(LooseNumber.self, forKey: .exp)) ?? LooseNumber() : nil
        nbf = container.contains(.nbf) ? (try? container.decode(LooseNumber.self, forKey: .nbf)) ?? LooseNumber() : nil
        iat = container.contains(.iat) ? (try? container.decode(LooseNumber.self, forKey: .iat)) ?? LooseNumber() : nil
        aud = try? container.decode(LooseValue.self, forKey: .aud)
        sub = container.contains(.sub) ? try? container.decode(LooseValue.self, forKey: .sub) : nil
        jti = container.contains(.jti) ? try? container.decode(LooseValue.self, forKey: .jti) : nil
    }

    private enum Keys: String, CodingKey {
        case signedDate, receiptCreationDate, exp, nbf, iat, aud, sub, jti
    }

    /// PyJWT's registered-claim checks with no leeway, no audience, issuer or subject configured.
    func registeredClaimProblem(now: Double) -> String? {
        if let iat {
            guard let value = iat.integer else { return "iat is not an integer" }
            if Double(value) > now { return "iat is in the future" }
        }
        if let nbf {
            guard let value = nbf.integer else { return "nbf is not an integer" }
            if Double(value) > now { return "nbf is in the future" }
        }
        if let exp {
            guard let value = exp.integer else { return "exp is not an integer" }
            if Double(value) <= now { return "exp has passed" }
        }
        if let aud, aud.isTruthy { return "aud is present but no audience is expected" }
        if let sub, !sub.isString { return "sub is not a string" }
        if let jti, !jti.isString { return "jti is not a string" }
        return nil
    }
}

extension LooseNumber {
    init() {
        integer = nil
        isNull = true
    }
}

extension ClaimsProbe {
    /// The claims of a plain payload: at most `signedDate`.
    init(signedDate: Int64?) {
        self.signedDate = signedDate.map { value in
            var number = LooseNumber()
            (number.integer, number.isNull) = (value, false)
            return number
        }
    }
}
