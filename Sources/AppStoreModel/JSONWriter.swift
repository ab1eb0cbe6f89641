internal import Foundation
public import Primitives

/// A value that writes itself as JSON with `JSONWriter`, producing exactly the bytes
/// `AppStoreJSON.encoder()` would (sorted keys, absent fields omitted, no escaped slashes), without
/// `JSONEncoder`'s cost. Minting encodes three payloads per notification, so this matters under load.
public protocol AppStoreJSONWritable: Encodable {
    /// Appends this value to `writer`.
    func writeJSON(to writer: inout JSONWriter)
}

/// Appends JSON to a byte buffer it owns. Keys are written in the order the caller gives them; callers give
/// them sorted, as `JSONEncoder` with `.sortedKeys` does.
///
/// The buffer is raw memory grown by doubling, so a field costs one capacity check and a few stores:
/// appending to an `Array` checked its uniqueness and capacity on every append, half of a payload's cost.
/// Noncopyable, so the buffer has one owner and is freed once.
public struct JSONWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Whether `base` is the writer's own heap memory (else a caller's stack buffer, until it grows).
    private var owned: Bool
    /// How many bytes are written so far.
    public private(set) var count = 0
    /// Whether the innermost open object or array has no element yet.
    private var first = true

    /// Creates a writer with room for `capacity` bytes before it grows.
    public init(capacity: Int = 1024) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
        owned = true
    }

    private init(borrowing buffer: UnsafeMutableBufferPointer<UInt8>) {
        base = buffer.baseAddress!
        capacity = buffer.count
        owned = false
    }

    deinit {
        if owned { base.deallocate() }
    }

    /// Lends `body` a writer whose first `capacity` bytes are on the stack: a payload written and read in
    /// one scope costs no heap buffer (a kilobyte-sized `malloc` also makes glibc consolidate its small free
    /// chunks, which slows the next ECDSA signature's own allocations).
    /// - Parameters:
    ///   - capacity: the bytes on the stack; the writer moves to the heap if it outgrows them.
    ///   - body: writes with the writer, which cannot outlive it.
    /// - Returns: what `body` returns.
    public static func withTemporaryStorage<Result, Failure: Error>(
        capacity: Int,
        _ body: (inout JSONWriter) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(capacity, 64)) { buffer throws(Failure) in
            var writer = JSONWriter(borrowing: buffer)
            return try body(&writer)
        }
    }

    /// The JSON written so far, copied into an array.
    public var bytes: [UInt8] { [UInt8](UnsafeBufferPointer(start: base, count: count)) }

    /// Lends the JSON written so far without copying it.
    /// - Parameter body: reads the bytes; they are valid only inside it.
    /// - Returns: what `body` returns.
    public func withBytes<Result, Failure: Error>(
        _ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(UnsafeBufferPointer(start: base, count: count))
    }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private mutating func grow(to needed: Int) {
        let grown = max(needed, capacity * 2)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        moved.initialize(from: base, count: count)
        if owned { base.deallocate() }
        base = moved
        capacity = grown
        owned = true
    }

    @inline(__always)
    private mutating func byte(_ value: UInt8) {
        reserve(1)
        base[count] = value
        count += 1
    }

    @inline(__always)
    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        reserve(bytes.count)
        Self.copy(source, to: base + count, count: bytes.count)
        count += bytes.count
    }

    /// Copies a few bytes with at most two overlapping loads and stores of a word: most keys and values are
    /// shorter than 16 bytes, where a call to `memcpy` costs more than the copy.
    @inline(__always)
    private static func copy(_ source: UnsafePointer<UInt8>, to target: UnsafeMutablePointer<UInt8>, count: Int) {
        let (from, to) = (UnsafeRawPointer(source), UnsafeMutableRawPointer(target))
        switch count {
        case 8...16:
            let (head, tail) = (
                from.loadUnaligned(as: UInt64.self), from.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            )
            to.storeBytes(of: head, as: UInt64.self)
            to.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
        case 4..<8:
            let (head, tail) = (
                from.loadUnaligned(as: UInt32.self), from.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            )
            to.storeBytes(of: head, as: UInt32.self)
            to.storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
        case 0..<4:
            for index in 0..<count { target[index] = source[index] }
        default:
            target.initialize(from: source, count: count)
        }
    }

    /// Opens an object.
    public mutating func beginObject() {
        byte(UInt8(ascii: "{"))
        first = true
    }

    /// Closes an object; the enclosing object or array now has an element.
    public mutating func endObject() {
        byte(UInt8(ascii: "}"))
        first = false
    }

    /// Writes `,"name":` (no comma before an object's first key) with one capacity check.
    private mutating func key(_ name: StaticString) {
        guard name.hasPointerRepresentation else {
            // A one-scalar literal has no UTF-8 in memory; field names are never that, but stay correct.
            name.withUTF8Buffer { key(UnsafeBufferPointer(rebasing: $0[...])) }
            return
        }
        key(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    @inline(__always)
    private mutating func key(_ name: UnsafeBufferPointer<UInt8>) {
        let comma = first ? 0 : 1
        first = false
        reserve(name.count + 4)
        let start = base + count
        // Written unconditionally and overwritten by the quote when there is no comma: no branch.
        start[0] = UInt8(ascii: ",")
        let quote = start + comma
        quote[0] = UInt8(ascii: "\"")
        if let text = name.baseAddress { Self.copy(text, to: quote + 1, count: name.count) }
        quote[name.count + 1] = UInt8(ascii: "\"")
        quote[name.count + 2] = UInt8(ascii: ":")
        count += comma + name.count + 3
    }

    /// Writes `"name":"value"`, or nothing when `value` is `nil`.
    public mutating func field(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// Writes `"name":value`, or nothing when `value` is `nil`.
    public mutating func field(_ name: StaticString, _ value: Int64?) {
        guard let value else { return }
        key(name)
        integer(value)
    }

    /// Writes `"name":value`, or nothing when `value` is `nil`.
    public mutating func field(_ name: StaticString, _ value: Int32?) {
        guard let value else { return }
        key(name)
        integer(Int64(value))
    }

    /// Writes `"name":true` or `false`, or nothing when `value` is `nil`.
    public mutating func field(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        key(name)
        let literal: StaticString = value ? "true" : "false"
        literal.withUTF8Buffer { append($0) }
    }

    /// Writes `"name":["a","b"]`, or nothing when `value` is `nil`.
    public mutating func field(_ name: StaticString, _ value: [String]?) {
        guard let value else { return }
        key(name)
        byte(UInt8(ascii: "["))
        for (index, element) in value.enumerated() {
            if index > 0 { byte(UInt8(ascii: ",")) }
            string(element)
        }
        byte(UInt8(ascii: "]"))
        first = false
    }

    /// Writes a string-backed wire enum's raw value, or nothing when `value` is `nil`.
    public mutating func field<E: OpenWireEnum>(_ name: StaticString, _ value: E?) where E.RawValue == String {
        field(name, value?.rawValue)
    }

    /// Writes an integer-backed wire enum's raw value, or nothing when `value` is `nil`.
    public mutating func field<E: OpenWireEnum>(_ name: StaticString, _ value: E?) where E.RawValue == Int {
        field(name, value.map { Int64($0.rawValue) })
    }

    /// Writes a nested object, or nothing when `value` is `nil`.
    public mutating func field<T: AppStoreJSONWritable>(_ name: StaticString, _ value: T?) {
        guard let value else { return }
        key(name)
        value.writeJSON(to: &self)
    }

    /// Writes arbitrary JSON through `JSONEncoder` (it is rare: Advanced Commerce data only).
    public mutating func field(_ name: StaticString, _ value: JSONValue?) {
        guard let value, let encoded = try? AppStoreJSON.encoder().encode(value) else { return }
        key(name)
        encoded.withUnsafeBytes { append($0.bindMemory(to: UInt8.self)) }
        first = false
    }

    /// Writes the decimal digits straight into the buffer, two per table lookup: `String(value)` cost an
    /// allocation and a copy per number, and a payload has a dozen (dates, prices, ids).
    private mutating func integer(_ value: Int64) {
        // The magnitude as unsigned, so Int64.min has one too.
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits and a sign
        withUnsafeMutableBytes(of: &digits) { scratch in
            let end = scratch.baseAddress!.assumingMemoryBound(to: UInt8.self) + scratch.count
            var position = end
            Self.digitPairs.withUnsafeBufferPointer { table in
                let pairs = table.baseAddress!
                while magnitude >= 100 {
                    let pair = Int(magnitude % 100) &* 2
                    magnitude /= 100
                    position -= 2
                    position[0] = pairs[pair]
                    position[1] = pairs[pair + 1]
                }
                if magnitude >= 10 {
                    let pair = Int(magnitude) &* 2
                    position -= 2
                    position[0] = pairs[pair]
                    position[1] = pairs[pair + 1]
                } else {
                    position -= 1
                    position[0] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude)
                }
            }
            if value < 0 {
                position -= 1
                position[0] = UInt8(ascii: "-")
            }
            append(UnsafeBufferPointer(start: position, count: end - position))
        }
    }

    /// "00" through "99", two bytes each.
    private static let digitPairs: [UInt8] = Array("0123456789".utf8).flatMap { tens in
        Array("0123456789".utf8).flatMap { units -> [UInt8] in [tens, units] }
    }

    /// Writes a JSON string, escaping as `JSONEncoder` does: quote, backslash and control characters;
    /// slashes and non-ASCII stay as they are.
    private mutating func string(_ value: String) {
        if let written: Void = value.utf8.withContiguousStorageIfAvailable({ string($0) }) { return written }
        var text = value
        text.withUTF8 { string($0) }
    }

    private mutating func string(_ buffer: UnsafeBufferPointer<UInt8>) {
        // Most strings need no escape: a capacity check and one copy, no per-byte appends.
        reserve(buffer.count + 2)
        byte(UInt8(ascii: "\""))
        JSONEscaping.write(buffer) { append($0) }
        byte(UInt8(ascii: "\""))
    }
}

/// The writer owns raw memory and lends it only inside `withBytes`, on the thread that holds it.
@available(*, unavailable)
extension JSONWriter: Sendable {}

extension AppStoreJSON {
    /// Encodes a payload to the same bytes as `encoder()`, several times faster.
    /// - Parameter value: the payload.
    /// - Returns: the JSON bytes.
    public static func encode(_ value: some AppStoreJSONWritable) -> [UInt8] {
        var writer = JSONWriter()
        value.writeJSON(to: &writer)
        return writer.bytes
    }
}
