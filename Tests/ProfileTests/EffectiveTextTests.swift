import Foundation
import Testing

@testable import Profile

/// The profile as it runs, the text a shard's digest is taken of: variables substituted, comments, spacing and
/// key order not shown.
struct EffectiveTextTests {
    static let profile = """
        // a comment
        { name: "p", seed: 1, target: { webhookURL: "http://127.0.0.1:${PORT}/n" } }
        """

    @Test func commentsSpacingAndKeyOrderDoNotShow() throws {
        let reordered = """
            {target:{webhookURL:"http://127.0.0.1:${PORT}/n"},seed:1,name:"p"}
            """
        let variables = ProfileVariables(set: ["PORT": "80"], environment: [:])
        let text = try #require(Profile.effectiveText(of: Data(Self.profile.utf8), variables: variables))
        #expect(Profile.effectiveText(of: Data(reordered.utf8), variables: variables) == text)
        #expect(text == #"{"name":"p","seed":1,"target":{"webhookURL":"http://127.0.0.1:80/n"}}"#)
    }

    @Test func anotherVariableValueIsAnotherProfile() {
        let data = Data(Self.profile.utf8)
        let first = Profile.effectiveText(of: data, variables: ProfileVariables(set: ["PORT": "80"], environment: [:]))
        let second = Profile.effectiveText(of: data, variables: ProfileVariables(set: ["PORT": "81"], environment: [:]))
        #expect(first != nil && first != second)
    }

    @Test func anUndefinedVariableGivesNoText() {
        #expect(
            Profile.effectiveText(of: Data(Self.profile.utf8), variables: ProfileVariables(environment: [:])) == nil
        )
    }
}
