internal import AppStoreModel
internal import Foundation
internal import Synchronization

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
    /// as Python structures the payload after the signature), over the JWS's UTF-8 bytes.
    func verify<T: Decodable>(
        utf8 text: UnsafeBufferPointer<UInt8>,
        as type: T.Type,
        skipSignature: Bool,
        onlineChecks: Bool
    ) -> Result<T, VerificationError> {
        // PyJWT: rsplit('.', 1) for the signature, then split('.', 1) for header and payload.
        // The first dot through memchr: it ends a header of about 5 KB (the x5c), which a byte loop scans slowly.
        guard let lastDot = text.lastIndex(of: UInt8(ascii: ".")), let base = text.baseAddress,
            let found = memchr(base, Int32(UInt8(ascii: ".")), lastDot)
        else { return failure("the JWS does not have three segments") }
        let firstDot = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        let headerSegment = UnsafeBufferPointer(rebasing: text[..<firstDot])
        let payloadSegment = UnsafeBufferPointer(rebasing: text[(firstDot + 1)..<lastDot])
        let signatureSegment = text[(lastDot + 1)...]
        guard let payload = JWS.base64URLDecode(payloadSegment), let signature = JWS.base64URLDecode(signatureSegment)
        else { return failure("a JWS segment is not base64url") }
        let cached = skipSignature ? nil : lookup(headerSegment)
        var header: HeaderProbe?
        if cached == nil {
            switch Self.decodeHeader(headerSegment) {
            case .success(let decoded): header = decoded
            case .failure(let error): return .failure(error)
            }
        }
        let claims: ClaimsProbe
        let model: Result<T, VerificationError>
        switch Self.claimsAndModel(payload, as: type) {
        case .success(let decoded): (claims, model) = decoded
        case .failure(let error): return .failure(error)
        }
        if skipSignature { return model }

        let now = Int64(Date().timeIntervalSince1970)
        let effective: Int64
        switch Self.effectiveTime(of: claims, now: now, onlineChecks: onlineChecks) {
        case .success(let time): effective = time
        case .failure(let error): return .failure(error)
        }

        let entry: CachedHeader
        if let cached, cached.chain.covers(effective), !onlineChecks || cached.chain.onlineCheckIsFresh(now: now) {
            entry = cached
        } else {
            switch verifiedHeader(header, segment: headerSegment, at: effective, onlineChecks: onlineChecks) {
            case .success(let fresh): entry = fresh
            case .failure(let error): return .failure(error)
            }
        }

        if case .failure(let error) = Self.checkSignature(signature, over: payloadSegment, with: entry) {
            return .failure(error)
        }

        if let problem = claims.registeredClaimProblem(now: Date().timeIntervalSince1970) { return failure(problem) }
        return model
    }

    /// When the chain must be valid: now for online checks or a payload without a date, else when it was signed.
    private static func effectiveTime(
        of claims: ClaimsProbe,
        now: Int64,
        onlineChecks: Bool
    ) -> Result<Int64, VerificationError> {
        if onlineChecks { return .success(now) }
        if let date = claims.signedDate ?? claims.receiptCreationDate {
            guard let milliseconds = date.integer else { return failure("signedDate is not an integer") }
            return .success(floorDivide(milliseconds, 1000))
        }
        return .success(now)
    }

    /// The signature: ES256 over the ASCII signing input, raw R||S with the P-256 leaf key.
    private static func checkSignature(
        _ signature: [UInt8],
        over payloadSegment: UnsafeBufferPointer<UInt8>,
        with entry: CachedHeader
    ) -> Result<Void, VerificationError> {
        guard entry.chain.isP256, signature.count == 64, let der = p256DERSignature(fromRaw: signature) else {
            return failure("the signature is not a 64-byte ES256 signature from a P-256 leaf")
        }
        guard let digest = try? entry.prefixHash.digest(appending: payloadSegment) else {
            return failure("cannot hash the signing input")
        }
        let valid = (try? entry.chain.verifiers.withContext { $0.verifyDER(signature: der, digest: digest) }) ?? false
        guard valid else { return failure("the signature does not verify with the leaf key") }
        return .success(())
    }

    private static func decodeHeader(_ segment: UnsafeBufferPointer<UInt8>) -> Result<HeaderProbe, VerificationError> {
        guard let headerBytes = JWS.base64URLDecode(segment) else { return failure("a JWS segment is not base64url") }
        guard let decoded = try? JSONDecoder().decode(HeaderProbe.self, from: Data(headerBytes)) else {
            return failure("the JWS header is not a JSON object of the expected shape")
        }
        return .success(decoded)
    }

    /// One JSON pass for the claims the checks need and the model; a model failure waits its turn.
    /// A plain top level (the usual case) gives the claims from a byte scan, sparing the probe.
    private static func claimsAndModel<T: Decodable>(
        _ payload: [UInt8],
        as type: T.Type
    ) -> Result<(ClaimsProbe, Result<T, VerificationError>), VerificationError> {
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
        return .success((claims, model))
    }

    /// The header's checks and its chain at `effective`, remembered when they pass. `header` is nil when a
    /// cached entry skipped decoding it and its window or online check no longer covers this JWS.
    private func verifiedHeader(
        _ header: HeaderProbe?,
        segment: UnsafeBufferPointer<UInt8>,
        at effective: Int64,
        onlineChecks: Bool
    ) -> Result<CachedHeader, VerificationError> {
        let decoded: HeaderProbe
        if let header {
            decoded = header
        } else {
            switch Self.decodeHeader(segment) {
            case .success(let value): decoded = value
            case .failure: return failure("the JWS header is not a JSON object of the expected shape")
            }
        }
        guard let x5c = decoded.x5c, !x5c.isEmpty else { return failure("the x5c header is missing or empty") }
        guard decoded.alg == "ES256" else {
            return failure("alg is \(decoded.alg.map { "'\($0)'" } ?? "absent"), not ES256")
        }
        switch verifyChain(x5c, at: effective, onlineChecks: onlineChecks) {
        case .success(let chain):
            guard let fresh = try? CachedHeader(segment: Array(segment), chain: chain) else {
                return failure("cannot hash the JWS header")
            }
            remember(fresh)
            return .success(fresh)
        case .failure(let error): return .failure(error)
        }
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

/// The payload as raw bytes (for `verifiedPayload`): any JSON object decodes.
struct RawPayload: Decodable {
    init(from decoder: any Decoder) throws {}
}

private func failure<T>(_ detail: String) -> Result<T, VerificationError> {
    .failure(VerificationError(status: .verificationFailure, detail: detail))
}

private func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
    let quotient = value / divisor
    return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
}

/// The header fields the verifier reads.
struct HeaderProbe: Decodable {
    var alg: String?
    var x5c: [String]?
}
