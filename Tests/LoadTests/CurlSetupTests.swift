import CCurl
import Testing

@testable import Load

struct CurlSetupTests {
    /// Values libcurl 7.88 refuses, each named in the error: an HTTP version past the last one, a redirect
    /// limit below -1, an address family it does not have, and an option number it does not know.
    @Test(
        arguments: [
            (CURLOPT_HTTP_VERSION, 99, "CURLOPT_HTTP_VERSION = 99"),
            (CURLOPT_MAXREDIRS, -2, "CURLOPT_MAXREDIRS = -2"),
            (CURLOPT_IPRESOLVE, 99, "CURLOPT_IPRESOLVE = 99"),
            (CURLoption(rawValue: 99_999), 1, "curl option 99999 = 1"),
        ] as [(CURLoption, Int, String)]
    )
    func aRefusedEasyOptionIsAnErrorNamingIt(option: CURLoption, value: Int, named: String) throws {
        let easy = try #require(curl_easy_init())
        defer { curl_easy_cleanup(easy) }
        let error = #expect(throws: CurlSetupError.self) { try CurlEasySetup(easy: easy).set(option, value) }
        #expect(error?.description.hasPrefix("libcurl refused \(named): ") == true, "\(String(describing: error))")
        #expect(error?.code != 0)
    }

    @Test func anAcceptedEasyOptionPasses() throws {
        let easy = try #require(curl_easy_init())
        defer { curl_easy_cleanup(easy) }
        let setup = CurlEasySetup(easy: easy)
        try setup.set(CURLOPT_CONNECTTIMEOUT_MS, 1000)
        try setup.set(CURLOPT_URL, string: "http://127.0.0.1/")
        try setup.set(CURLOPT_CUSTOMREQUEST, string: nil)
    }

    @Test func aRefusedMultiOptionIsAnErrorNamingIt() throws {
        let multi = try #require(curl_multi_init())
        defer { curl_multi_cleanup(multi) }
        let error = #expect(throws: CurlSetupError.self) {
            try CurlMultiSetup(multi: multi).set(CURLMoption(rawValue: 99_999), "CURLMOPT_BOGUS", 1)
        }
        #expect(error?.description.hasPrefix("libcurl refused CURLMOPT_BOGUS = 1: ") == true)
    }

    @Test func easyOptionNamesComeFromLibcurlsTable() {
        #expect(curlOptionName(CURLOPT_TIMEOUT_MS) == "CURLOPT_TIMEOUT_MS")
        #expect(curlOptionName(CURLOPT_URL) == "CURLOPT_URL")
    }
}
