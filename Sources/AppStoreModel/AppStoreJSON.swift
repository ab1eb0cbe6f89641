public import Foundation

/// The one JSON configuration for App Store payloads, shared by every module so that what PayStorm
/// mints and what it parses follow the same rules.
///
/// Dates are `Int64` milliseconds in the models themselves, so no date strategy is involved; keys are
/// sorted so that the same value always encodes to the same bytes.
///
/// ```swift
/// let bytes = try AppStoreJSON.encoder().encode(payload)
/// let back = try AppStoreJSON.decoder().decode(JWSTransactionDecodedPayload.self, from: bytes)
/// ```
public enum AppStoreJSON {
    /// A new encoder: sorted keys, no escaped slashes, nil properties omitted.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// A new decoder; unknown keys are ignored, as in Apple's libraries.
    public static func decoder() -> JSONDecoder {
        JSONDecoder()
    }

    /// Whether a string is an RFC 4122 UUID in the textual form Apple's Swift and Java libraries accept
    /// for `appAccountToken` (8-4-4-4-12 hexadecimal digits, either case).
    /// - Parameter text: the candidate.
    /// - Returns: `true` when `UUID(uuidString:)` accepts it.
    public static func isValidUUID(_ text: String) -> Bool {
        UUID(uuidString: text) != nil
    }
}
