internal import COpenSSL
internal import CPayStormShims
internal import Foundation
internal import Synchronization

/// The protected header of a JWS. `x5c` holds standard-base64 DER, leaf first.
public struct JWSHeader: Codable, Sendable, Hashable {
    /// The algorithm; Apple's verifiers accept only `ES256`.
    public var alg: String
    /// The certificate chain: standard base64 (with padding) of each DER, leaf first.
    public var x5c: [String]?
    /// The media type; PyJWT writes `JWT`, and no verifier reads it.
    public var typ: String?

    /// Creates a header.
    public init(alg: String = "ES256", x5c: [String]? = nil, typ: String? = nil) {
        self.alg = alg
        self.x5c = x5c
        self.typ = typ
    }

    /// The header as compact JSON (keys sorted, slashes unescaped).
    public func jsonBytes() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(self))
    }
}

/// JWS compact serialization with ES256 (ECDSA P-256 + SHA-256, raw 64-byte `R||S` signature).
public enum JWS {
    /// Signs a payload: `base64url(header).base64url(payload).base64url(R||S)`.
    ///
    /// The signature is always ES256 with `key` whatever `header.alg` says, so forgeries can
    /// carry a wrong `alg` over a real signature.
    /// - Throws: `SigningError` when the key is not P-256 or OpenSSL fails.
    public static func sign(payload: [UInt8], header: JWSHeader, key: SigningKey) throws -> String {
        let headerSegment = base64URL(try header.jsonBytes())
        return try signCompact(headerSegment: Array(headerSegment.utf8), payload: payload) { digest in
            let context = try PKeyContext(key: key.pointer, mode: .sign)
            return try context.signRaw(digest: digest)
        }
    }

    /// Encodes a chain for the `x5c` header: standard base64 (RFC 4648 §4, padded) of each DER.
    public static func x5c(_ chain: [Certificate]) -> [String] {
        chain.map { Data($0.der).base64EncodedString() }
    }

    /// Encodes bytes as base64url without padding.
    public static func base64URL(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        appendBase64URL(bytes, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes base64url (padding optional); nil on any character outside the alphabet.
    public static func base64URLDecode(_ text: String) -> [UInt8]? {
        base64URLDecode(text.utf8)
    }

    /// Decodes base64url from UTF-8 bytes (padding optional); nil on any character outside the alphabet.
    static func base64URLDecode(_ text: some Collection<UInt8>) -> [UInt8]? {
        let decoded: [UInt8]?? = text.withContiguousStorageIfAvailable { decodeBase64URL($0) }
        if let decoded { return decoded }
        return Array(text).withUnsafeBufferPointer { decodeBase64URL($0) }
    }

    private static func decodeBase64URL(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var count = input.count
        // Up to two trailing '=' are allowed; '=' anywhere else is not.
        var padding = 0
        while count > 0 && input[count - 1] == UInt8(ascii: "=") && padding < 2 {
            count -= 1
            padding += 1
        }
        // A single leftover character cannot encode a byte.
        guard count % 4 != 1 else { return nil }
        let outputCount = count / 4 * 3 + [0, 0, 1, 2][count % 4]
        var failed = false
        let output = [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initialized in
            decodeTable.withUnsafeBufferPointer { table in
                var out = 0
                var index = 0
                var invalid: UInt8 = 0
                shiftedDecodeTable.withUnsafeBufferPointer { shifted in
                    // One lookup per character gives its 6 bits already in place; an invalid one sets bit 31.
                    var invalidBits: UInt32 = 0
                    while index + 4 <= count {
                        let value =
                            shifted[Int(input[index])] | shifted[256 + Int(input[index + 1])]
                            | shifted[512 + Int(input[index + 2])] | shifted[768 + Int(input[index + 3])]
                        invalidBits |= value
                        buffer[out] = UInt8(truncatingIfNeeded: value >> 16)
                        buffer[out + 1] = UInt8(truncatingIfNeeded: value >> 8)
                        buffer[out + 2] = UInt8(truncatingIfNeeded: value)
                        out += 3
                        index += 4
                    }
                    if invalidBits & 0x8000_0000 != 0 { invalid = 0x80 }
                }
                let rest = count - index
                if rest >= 2 {
                    let a = table[Int(input[index])]
                    let b = table[Int(input[index + 1])]
                    let c = rest == 3 ? table[Int(input[index + 2])] : 0
                    invalid |= a | b | c
                    let value = UInt32(a & 63) << 18 | UInt32(b & 63) << 12 | UInt32(c & 63) << 6
                    buffer[out] = UInt8(truncatingIfNeeded: value >> 16)
                    out += 1
                    if rest == 3 {
                        buffer[out] = UInt8(truncatingIfNeeded: value >> 8)
                        out += 1
                    }
                }
                // Invalid characters map to 0xFF, so any of them sets the high bit.
                failed = invalid & 0x80 != 0
                initialized = out
            }
        }
        return failed ? nil : output
    }

    /// Builds the compact JWS around a digest signer (the general path; `ES256Signer` has its own).
    static func signCompact(
        headerSegment: [UInt8],
        payload: [UInt8],
        sign: ([UInt8]) throws -> [UInt8]
    ) throws -> String {
        var output: [UInt8] = []
        output.reserveCapacity(headerSegment.count + 1 + (payload.count * 4 + 2) / 3 + 1 + 86)
        output.append(contentsOf: headerSegment)
        output.append(UInt8(ascii: "."))
        appendBase64URL(payload, to: &output)
        let signature = try sign(sha256(output))
        output.append(UInt8(ascii: "."))
        appendBase64URL(signature, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    static func appendBase64URL(_ bytes: [UInt8], to output: inout [UInt8]) {
        bytes.withUnsafeBufferPointer { appendBase64URL($0, to: &output) }
    }

    /// The length of the base64url text (no padding) of `count` bytes.
    static func base64URLLength(_ count: Int) -> Int {
        count / 3 * 4 + (count % 3 == 0 ? 0 : count % 3 + 1)
    }

    /// Appends base64url (no padding) of `input` to `output` in one pass over a buffer grown once.
    static func appendBase64URL(_ input: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        let encodedCount = base64URLLength(input.count)
        guard encodedCount > 0 else { return }
        let start = output.count
        // Grow once, then write through a raw pointer: per-byte `append` costs a uniqueness check each time.
        output.append(contentsOf: repeatElement(0, count: encodedCount))
        output.withUnsafeMutableBufferPointer { buffer in
            _ = encodeBase64URL(input, into: buffer.baseAddress! + start)
        }
    }

    /// Writes base64url (no padding) of `input` at `out`, which has room for ``base64URLLength(_:)`` bytes.
    /// - Returns: how many bytes were written.
    static func encodeBase64URL(_ input: UnsafeBufferPointer<UInt8>, into output: UnsafeMutablePointer<UInt8>) -> Int {
        let count = input.count
        guard count > 0, let source = input.baseAddress else { return 0 }
        return pairTable.withUnsafeBufferPointer { pairs in
            // Two characters per lookup: each 12-bit half of a 3-byte group maps to a UInt16.
            let out = UnsafeMutableRawPointer(output)
            let bytes = UnsafeRawPointer(source)
            var offset = 0
            var index = 0
            // Six bytes per step from one 8-byte load (big-endian, so the first byte is the top one):
            // four 12-bit halves, four pair lookups, instead of six byte loads.
            while index + 8 <= count {
                let word = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                out.storeBytes(of: pairs[Int(truncatingIfNeeded: word >> 52)], toByteOffset: offset, as: UInt16.self)
                out.storeBytes(
                    of: pairs[Int(truncatingIfNeeded: word >> 40) & 0xFFF],
                    toByteOffset: offset + 2,
                    as: UInt16.self
                )
                out.storeBytes(
                    of: pairs[Int(truncatingIfNeeded: word >> 28) & 0xFFF],
                    toByteOffset: offset + 4,
                    as: UInt16.self
                )
                out.storeBytes(
                    of: pairs[Int(truncatingIfNeeded: word >> 16) & 0xFFF],
                    toByteOffset: offset + 6,
                    as: UInt16.self
                )
                offset += 8
                index += 6
            }
            while index + 3 <= count {
                let value = Int(input[index]) << 16 | Int(input[index + 1]) << 8 | Int(input[index + 2])
                out.storeBytes(of: pairs[value >> 12], toByteOffset: offset, as: UInt16.self)
                out.storeBytes(of: pairs[value & 0xFFF], toByteOffset: offset + 2, as: UInt16.self)
                offset += 4
                index += 3
            }
            let rest = count - index
            guard rest > 0 else { return offset }
            let second = rest == 2 ? Int(input[index + 1]) << 8 : 0
            let value = Int(input[index]) << 16 | second
            out.storeBytes(of: pairs[value >> 12], toByteOffset: offset, as: UInt16.self)
            guard rest == 2 else { return offset + 2 }
            out.storeBytes(of: encodeTable[value >> 6 & 63], toByteOffset: offset + 2, as: UInt8.self)
            return offset + 3
        }
    }

    private static let encodeTable: [UInt8] = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8
    )

    /// For each 12-bit value, its two base64url characters as they lie in memory (little- or big-endian alike).
    private static let pairTable: [UInt16] = (0..<4096).map { value in
        var pair: UInt16 = 0
        withUnsafeMutableBytes(of: &pair) { bytes in
            bytes[0] = encodeTable[value >> 6]
            bytes[1] = encodeTable[value & 63]
        }
        return pair
    }

    /// For each of the four positions in a group, each byte's 6 bits shifted into place
    /// (`0x8000_0000` for a byte outside the alphabet): 4 × 256 entries.
    private static let shiftedDecodeTable: [UInt32] = (0..<4).flatMap { position in
        decodeTable.map { value in
            value == 0xFF ? 0x8000_0000 : UInt32(value) << (18 - 6 * position)
        }
    }

    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in encodeTable.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()
}
