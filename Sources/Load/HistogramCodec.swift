internal import CZlib
internal import Foundation

/// Why a histogram or an interval log could not be read.
public struct HistogramCodecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// One line naming the problem.
    public var message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// HdrHistogram's V2 compressed encoding (anchors §D.5), byte-compatible with the Java, C and
/// Python (`hdrhistogram` on PyPI) libraries.
///
/// Layout: cookie `0x1c849314`, compressed length, then zlib DEFLATE of a 40-byte header
/// (cookie `0x1c849313`, payload length, normalising offset, digits, lowest, highest,
/// conversion ratio) followed by the counts as ZigZag LEB128, runs of zeros as negative counts.
public enum HistogramCodec {
    static let encodingCookie: UInt32 = 0x1c84_9303 | 0x10
    static let compressedCookie: UInt32 = 0x1c84_9304 | 0x10
    static let headerSize = 40

    /// The uncompressed V2 bytes of a histogram.
    public static func encodeV2(_ histogram: Histogram) -> [UInt8] {
        var payload: [UInt8] = []
        payload.reserveCapacity(64)
        let used = histogram.usedLength
        var index = 0
        while index < used {
            let count = histogram.counts[index]
            if count == 0 {
                var zeros: Int64 = 0
                while index < used && histogram.counts[index] == 0 {
                    zeros += 1
                    index += 1
                }
                putZigZag(-zeros, into: &payload)
            } else {
                putZigZag(count, into: &payload)
                index += 1
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerSize + payload.count)
        putBigEndian(UInt64(encodingCookie), width: 4, into: &bytes)
        putBigEndian(UInt64(payload.count), width: 4, into: &bytes)
        putBigEndian(0, width: 4, into: &bytes)
        putBigEndian(UInt64(histogram.significantDigits), width: 4, into: &bytes)
        putBigEndian(UInt64(histogram.lowestDiscernibleValue), width: 8, into: &bytes)
        putBigEndian(UInt64(histogram.highestTrackableValue), width: 8, into: &bytes)
        putBigEndian((1.0 as Double).bitPattern, width: 8, into: &bytes)
        bytes += payload
        return bytes
    }

    /// The compressed V2 bytes of a histogram.
    public static func encodeCompressed(_ histogram: Histogram) -> [UInt8] {
        let raw = encodeV2(histogram)
        var bound = compressBound(uLong(raw.count))
        var deflated = [UInt8](repeating: 0, count: Int(bound))
        let status = deflated.withUnsafeMutableBufferPointer { out in
            raw.withUnsafeBufferPointer { input in
                compress2(out.baseAddress, &bound, input.baseAddress, uLong(raw.count), Z_DEFAULT_COMPRESSION)
            }
        }
        // compress2 cannot fail with a buffer of compressBound size and a valid level.
        precondition(status == Z_OK, "zlib compress2 failed: \(status)")
        deflated.removeSubrange(Int(bound)...)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 + deflated.count)
        putBigEndian(UInt64(compressedCookie), width: 4, into: &bytes)
        putBigEndian(UInt64(deflated.count), width: 4, into: &bytes)
        return bytes + deflated
    }

    /// The base64 text of the compressed encoding (what a `.hlog` line carries).
    public static func encodeBase64(_ histogram: Histogram) -> String {
        Data(encodeCompressed(histogram)).base64EncodedString()
    }

    /// Decodes base64 text of a compressed (or plain) V2 histogram.
    /// - Throws: ``HistogramCodecError`` naming the problem.
    public static func decodeBase64(_ text: some StringProtocol) throws -> Histogram {
        guard let data = Data(base64Encoded: String(text)) else {
            throw HistogramCodecError("histogram is not valid base64")
        }
        return try decode(Array(data))
    }

    /// Decodes compressed or plain V2 bytes.
    /// - Throws: ``HistogramCodecError`` for unknown cookies, bad zlib data or bad counts.
    public static func decode(_ bytes: [UInt8]) throws -> Histogram {
        guard bytes.count >= 8 else { throw HistogramCodecError("histogram is truncated") }
        let cookie = UInt32(truncatingIfNeeded: getBigEndian(bytes, at: 0, width: 4))
        switch cookie & ~0xf0 {
        case 0x1c84_9304:
            let length = Int(getBigEndian(bytes, at: 4, width: 4))
            guard bytes.count >= 8 + length else { throw HistogramCodecError("compressed histogram is truncated") }
            return try decodeV2(inflate(Array(bytes[8..<(8 + length)])))
        case 0x1c84_9303:
            return try decodeV2(bytes)
        default:
            throw HistogramCodecError(
                "unsupported histogram cookie 0x\(String(cookie, radix: 16)) (only V2 encodings are read)"
            )
        }
    }

    static func decodeV2(_ bytes: [UInt8]) throws -> Histogram {
        guard bytes.count >= headerSize else { throw HistogramCodecError("histogram header is truncated") }
        let cookie = UInt32(truncatingIfNeeded: getBigEndian(bytes, at: 0, width: 4))
        guard cookie & ~0xf0 == 0x1c84_9303 else {
            throw HistogramCodecError("unsupported histogram cookie 0x\(String(cookie, radix: 16))")
        }
        let payloadLength = Int(getBigEndian(bytes, at: 4, width: 4))
        let offset = Int32(truncatingIfNeeded: getBigEndian(bytes, at: 8, width: 4))
        let digits = Int(getBigEndian(bytes, at: 12, width: 4))
        let lowest = Int64(bitPattern: getBigEndian(bytes, at: 16, width: 8))
        let highest = Int64(bitPattern: getBigEndian(bytes, at: 24, width: 8))
        guard offset == 0 else { throw HistogramCodecError("normalising index offsets are not supported") }
        guard (0...5).contains(digits), lowest >= 1, highest >= 2 * lowest else {
            throw HistogramCodecError("histogram header has an invalid layout")
        }
        guard bytes.count >= headerSize + payloadLength else {
            throw HistogramCodecError("histogram payload is truncated")
        }
        var counts: [Int64] = []
        var position = headerSize
        let end = headerSize + payloadLength
        while position < end {
            guard let value = getZigZag(bytes, at: &position, end: end) else {
                throw HistogramCodecError("histogram counts are truncated")
            }
            if value < 0 {
                guard -value <= 1 << 24 else { throw HistogramCodecError("histogram zero run is too long") }
                counts += repeatElement(0, count: Int(-value))
            } else {
                counts.append(value)
            }
        }
        guard
            let histogram = Histogram(
                lowest: lowest,
                highest: highest,
                significantDigits: digits,
                decodedCounts: counts
            )
        else { throw HistogramCodecError("histogram has more counts than its layout holds") }
        return histogram
    }

    static func inflate(_ input: [UInt8]) throws -> [UInt8] {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw HistogramCodecError("zlib inflateInit failed")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = input
        let status: Int32 = input.withUnsafeMutableBufferPointer { inBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = uInt(inBuffer.count)
            var status = Z_OK
            repeat {
                status = chunk.withUnsafeMutableBufferPointer { outBuffer in
                    stream.next_out = outBuffer.baseAddress
                    stream.avail_out = uInt(outBuffer.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                output += chunk[0..<produced]
                // A histogram never needs more than its counters; stop hostile input early.
                if output.count > 64 << 20 { return Z_DATA_ERROR }
            } while status == Z_OK
            return status
        }
        guard status == Z_STREAM_END else { throw HistogramCodecError("histogram is not valid zlib data") }
        return output
    }

    // MARK: Primitive encodings

    static func putZigZag(_ value: Int64, into bytes: inout [UInt8]) {
        var encoded = UInt64(bitPattern: (value << 1) ^ (value >> 63))
        for _ in 0..<8 {
            if encoded >> 7 == 0 {
                bytes.append(UInt8(encoded))
                return
            }
            bytes.append(UInt8(encoded & 0x7f) | 0x80)
            encoded >>= 7
        }
        bytes.append(UInt8(truncatingIfNeeded: encoded))
    }

    static func getZigZag(_ bytes: [UInt8], at position: inout Int, end: Int) -> Int64? {
        var encoded: UInt64 = 0
        var shift: UInt64 = 0
        for step in 0..<9 {
            guard position < end else { return nil }
            let byte = bytes[position]
            position += 1
            if step == 8 {
                encoded |= UInt64(byte) << 56
                break
            }
            encoded |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        return Int64(bitPattern: encoded >> 1) ^ -Int64(bitPattern: encoded & 1)
    }

    static func putBigEndian(_ value: UInt64, width: Int, into bytes: inout [UInt8]) {
        for byte in stride(from: width - 1, through: 0, by: -1) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(byte * 8)))
        }
    }

    static func getBigEndian(_ bytes: [UInt8], at offset: Int, width: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + width) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
