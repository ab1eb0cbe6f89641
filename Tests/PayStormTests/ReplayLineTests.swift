import Testing

@testable import PayStorm

struct ReplayLineTests {
    @Test func plainWordsStayAsTheyAre() {
        #expect(shellQuoted("Profiles/smoke.json5") == "Profiles/smoke.json5")
        #expect(shellQuoted("TARGET=http://127.0.0.1:8080/v1") == "TARGET=http://127.0.0.1:8080/v1")
    }

    @Test func wordsWithSpacesOrQuotesAreQuotedForTheShell() {
        #expect(shellQuoted("TOKEN=a b") == "'TOKEN=a b'")
        #expect(shellQuoted("X=it's") == "'X=it'\\''s'")
        #expect(shellQuoted("") == "''")
    }
}
