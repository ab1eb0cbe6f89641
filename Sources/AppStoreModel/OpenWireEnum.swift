/// A wire enum kept as an open set: decoding accepts any raw value and keeps it, so a payload with a
/// value Apple adds later, or a value PayStorm emits on purpose to test a backend, round-trips unchanged.
///
/// Conforming types are single-value JSON (a string or an integer), through the standard library's
/// `Codable` support for `RawRepresentable`.
///
/// ```swift
/// let environment: Environment = "Sandbox"        // == .sandbox
/// let odd = Environment(rawValue: "Staging")       // kept, `isKnown == false`
/// ```
public protocol OpenWireEnum: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible,
    CustomDebugStringConvertible
where RawValue: Codable & Hashable & Sendable {
    /// Creates a value from its JSON form; never fails.
    init(rawValue: RawValue)
    /// Every value Apple documents.
    static var allKnown: [Self] { get }
}

extension OpenWireEnum {
    /// Whether Apple documents this value.
    public var isKnown: Bool { Self.allKnown.contains(self) }

    /// The raw value as text.
    public var description: String { "\(rawValue)" }

    /// The raw value as its JSON literal (a quoted string or a number), so a struct holding wire values
    /// debug-prints just as it did when those fields were plain strings and integers.
    public var debugDescription: String { String(reflecting: rawValue) }
}

extension OpenWireEnum where RawValue == String {
    /// Creates a value from a string literal, known or not.
    public init(stringLiteral value: String) {
        self.init(rawValue: value)
    }
}

extension OpenWireEnum where RawValue == Int {
    /// Creates a value from an integer literal, known or not.
    public init(integerLiteral value: Int) {
        self.init(rawValue: value)
    }
}
