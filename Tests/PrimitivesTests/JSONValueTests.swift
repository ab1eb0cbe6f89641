import Foundation
import Testing

@testable import Primitives

struct JSONValueTests {
    @Test(arguments: [("/a~1b/0", "x"), ("/m~0n", "y"), ("/~01", "z"), ("/list/1", "b")])
    func resolvesRFC6901Pointers(pointer: String, expected: String) throws {
        let root = try decode(#"{"a/b": ["x"], "m~n": "y", "~1": "z", "list": ["a", "b"]}"#)
        #expect(root.resolve(pointer: pointer)?.stringValue == expected)
    }

    @Test(arguments: ["/missing", "/list/2", "/list/-1", "/list/x", "no-slash", "/m~0n/deeper"])
    func findsNothingWhereAPointerLeadsNowhere(pointer: String) throws {
        let root = try decode(#"{"m~n": "y", "list": ["a", "b"]}"#)
        #expect(root.resolve(pointer: pointer) == nil)
        #expect(root.resolve(pointer: "") == root)
    }

    @Test func keepsEveryDigitOfALargeIntegerAndItsType() throws {
        let text = #"{"big":18446744073709551615,"id":2000000000000001,"price":1.5,"yes":true,"no":null}"#
        let value = try decode(text)
        #expect(value.resolve(pointer: "/id")?.int64Value == 2_000_000_000_000_001)
        #expect(value.resolve(pointer: "/price")?.int64Value == nil)
        #expect(value.resolve(pointer: "/yes") == .bool(true))
        #expect(
            value.jsonText == #"{"big":18446744073709551615,"id":2000000000000001,"no":null,"price":1.5,"yes":true}"#
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        #expect(String(decoding: try encoder.encode(value), as: UTF8.self) == value.jsonText)
    }

    /// The one escaper writes what `JSONEncoder` writes, short forms included.
    @Test func escapesAsJSONEncoderDoes() throws {
        let text = "q\" b\\ n\n r\r t\t b\u{08} f\u{0C} nul\u{00} us\u{1F} slash/ é long-enough-for-words"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let encoded = String(decoding: try encoder.encode([text]), as: UTF8.self)
        #expect(encoded == "[\"" + JSONEscaping.escaped(text) + "\"]")
        #expect(JSONValue.string(text).jsonText == "\"" + JSONEscaping.escaped(text) + "\"")
    }

    private func decode(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }
}
