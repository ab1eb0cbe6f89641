/// Digests that identify content rather than sign it.
public enum ContentDigest {
    /// SHA-256 of bytes as 64 lowercase hex digits.
    /// - Parameter bytes: the content.
    /// - Returns: the digest in hex.
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in sha256(bytes) {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
