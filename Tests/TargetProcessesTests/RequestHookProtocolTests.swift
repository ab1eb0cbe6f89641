import Foundation
import Testing

@testable import TargetProcesses

/// The request hook's line protocol: what PayStorm writes, what it reads back, and what it refuses.
struct RequestHookProtocolTests {
    static let request = RequestHookRequest(
        id: 7,
        role: "deviceDelivery",
        kind: "device",
        method: "POST",
        url: "http://127.0.0.1:8000/api/purchases",
        headers: [("Content-Type", "application/json"), ("X-User-Id", "u-1")],
        body: Array(#"{"jws":"a.b.c","userId":"u-1"}"#.utf8),
        account: ["id": "u-1", "appAccountToken": "5F0C", "secret": "s\"1"],
        transaction: .init(id: "2000", originalId: "", productId: "coins")
    )

    @Test func aRequestIsOneJSONLineWithEveryPartAndEscapedText() throws {
        let line = Self.request.line
        #expect(line.last == UInt8(ascii: "\n") && line.dropLast().allSatisfy { $0 != UInt8(ascii: "\n") })
        let text = String(decoding: line, as: UTF8.self)
        #expect(
            text == #"{"id":7,"role":"deviceDelivery","kind":"device","method":"POST","#
                + #""url":"http://127.0.0.1:8000/api/purchases","#
                + #""headers":{"Content-Type":"application/json","X-User-Id":"u-1"},"#
                + #""body":"{\"jws\":\"a.b.c\",\"userId\":\"u-1\"}","#
                + #""account":{"appAccountToken":"5F0C","id":"u-1","secret":"s\"1"},"#
                + #""transaction":{"id":"2000","productId":"coins"}}"# + "\n"
        )
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        #expect(decoded["body"] as? String == #"{"jws":"a.b.c","userId":"u-1"}"#)
    }

    @Test func anAnswerAddsHeadersReplacingOnesOfTheSameNameInAnyCase() throws {
        let answer = try RequestHookAnswer.decode(
            Array(#"{"id": 7, "addHeaders": {"x-user-id": "u-2", "X-Signature": "sha256=ab"}}"#.utf8)
        )
        let sent = try answer.applied(to: Self.request)
        #expect(sent.headers.map(\.name) == ["Content-Type", "X-Signature", "x-user-id"])
        #expect(sent.headers.last?.value == "u-2")
        #expect(sent.body == Self.request.body && sent.url == Self.request.url && sent.method == "POST")
    }

    @Test func anAnswerReplacesTheWholeRequestOrSetsBodyFields() throws {
        let whole = try RequestHookAnswer.decode(
            Array(
                #"{"id":7,"method":"PUT","url":"http://127.0.0.1:8000/v2/p?sig=1","headers":{"A":"1"},"body":"x"}"#
                    .utf8
            )
        )
        let replaced = try whole.applied(to: Self.request)
        #expect(replaced.method == "PUT" && replaced.url.hasSuffix("/v2/p?sig=1") && replaced.body == Array("x".utf8))
        #expect(replaced.headers.map(\.name) == ["A"])

        let fields = try RequestHookAnswer.decode(
            Array(#"{"id":7,"setBodyFields":{"nonce":"n1","signature":{"v":2}}}"#.utf8)
        )
        let set = try fields.applied(to: Self.request)
        #expect(
            String(decoding: set.body, as: UTF8.self)
                == #"{"jws":"a.b.c","nonce":"n1","signature":{"v":2},"userId":"u-1"}"#
        )
    }

    @Test(arguments: [
        ("signed!", "not JSON"),
        ("[1]", "not a JSON object"),
        (#"{"addHeaders": {}}"#, "no integer \"id\""),
        (#"{"id": "7"}"#, "no integer \"id\""),
        (#"{"id": 7, "addHeader": {}}"#, "unknown key \"addHeader\""),
        (#"{"id": 7, "addHeaders": {"X-Sig": 5}}"#, "\"addHeaders\".X-Sig is not a string"),
        (#"{"id": 7, "addHeaders": {"X-Sig": "a\r\nX-Evil: 1"}}"#, "line break or NUL"),
        (#"{"id": 7, "addHeaders": {"X Sig": "a"}}"#, "is not a token"),
        (#"{"id": 7, "method": "PO ST"}"#, "not an HTTP method"),
        (#"{"id": 7, "body": 5}"#, "\"body\" is not a string"),
        (#"{"id": 7, "setBodyFields": []}"#, "\"setBodyFields\" is not an object"),
    ])
    func aLineThatIsNotAnAnswerIsRefusedSayingWhy(line: String, reason: String) {
        do {
            let answer = try RequestHookAnswer.decode(Array(line.utf8))
            Issue.record("accepted \(line): \(answer)")
        } catch {
            #expect(error.description.contains(reason), "\(error)")
        }
    }

    @Test(arguments: [
        (#"{"id": 7, "url": "http://127.0.0.2:8000/api"}"#, "not on the request's scheme, host and port"),
        (#"{"id": 7, "url": "https://127.0.0.1:8000/api"}"#, "not on the request's scheme, host and port"),
        (#"{"id": 7, "body": "[1]", "setBodyFields": {"a": 1}}"#, "on a body that is not a JSON object"),
    ])
    func anAnswerThatWouldLeaveTheTargetOrBreakTheBodyIsRefused(line: String, reason: String) throws {
        let answer = try RequestHookAnswer.decode(Array(line.utf8))
        do {
            let sent = try answer.applied(to: Self.request)
            Issue.record("applied \(line): \(sent.url)")
        } catch {
            #expect(error.description.contains(reason), "\(error)")
        }
    }
}
