import Signing
import Testing

struct DERTests {
    @Test(
        arguments: [
            (Int64(0), [0x02, 0x01, 0x00]),
            (127, [0x02, 0x01, 0x7F]),
            (128, [0x02, 0x02, 0x00, 0x80]),
            (256, [0x02, 0x02, 0x01, 0x00]),
            (1703, [0x02, 0x02, 0x06, 0xA7]),
            (-1, [0x02, 0x01, 0xFF]),
            (-128, [0x02, 0x01, 0x80]),
            (-129, [0x02, 0x02, 0xFF, 0x7F]),
            (Int64.max, [0x02, 0x08, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
            (Int64.min, [0x02, 0x08, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
        ] as [(Int64, [UInt8])]
    )
    func encodesIntegersInTheFewestBytesThatKeepTheSign(value: Int64, expected: [UInt8]) throws {
        #expect(DER.integer(value) == expected)
        let element = try #require(DER.elements(expected)?.first)
        #expect(element.integer == value)
    }

    @Test func encodesStringsAndOctetsWithTheirTags() {
        #expect(DER.utf8String("é") == [0x0C, 0x02, 0xC3, 0xA9])
        #expect(DER.ia5String("Z") == [0x16, 0x01, 0x5A])
        #expect(DER.octetString([1, 2]) == [0x04, 0x02, 0x01, 0x02])
        #expect(DER.ia5String("") == [0x16, 0x00])
    }

    @Test func keepsTheGivenOrderInSequencesAndSets() {
        #expect(DER.sequence([DER.integer(2), DER.integer(1)]) == [0x30, 0x06, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01])
        #expect(DER.set([DER.integer(2), DER.integer(1)]) == [0x31, 0x06, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01])
    }

    @Test(arguments: [(127, [0x7F]), (128, [0x81, 0x80]), (255, [0x81, 0xFF]), (300, [0x82, 0x01, 0x2C])])
    func writesLongLengthsInTheLongForm(count: Int, header: [UInt8]) throws {
        let encoded = DER.octetString([UInt8](repeating: 7, count: count))
        #expect(Array(encoded.prefix(1 + header.count)) == [0x04] + header)
        #expect(encoded.count == 1 + header.count + count)
        let element = try #require(DER.elements(encoded)?.first)
        #expect(element.content.count == count)
    }

    @Test func readsNestedElementsBack() throws {
        let attribute = DER.sequence([DER.integer(17), DER.integer(1), DER.octetString(DER.utf8String("id"))])
        let outer = try #require(DER.elements(DER.set([attribute, attribute])))
        #expect(outer.count == 1 && outer[0].tag == 0x31)
        let members = try #require(outer[0].children)
        #expect(members.count == 2)
        let fields = try #require(members[0].children)
        #expect(fields.map(\.tag) == [0x02, 0x02, 0x04])
        #expect(fields[0].integer == 17)
        #expect(fields[2].children?.first?.string == "id")
    }

    @Test(
        arguments: [
            [0x04, 0x03, 0x01],  // length past the end
            [0x04],  // no length
            [0x04, 0x80],  // indefinite length
            [0x04, 0x85, 0, 0, 0, 0, 1],  // five length bytes
            [0x1F, 0x01, 0x00],  // high tag number
        ] as [[UInt8]]
    )
    func refusesMalformedBytes(bytes: [UInt8]) {
        #expect(DER.elements(bytes) == nil)
    }
}
