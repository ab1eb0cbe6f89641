public import Foundation
import Primitives

extension Profile {
    /// A profile document as it runs: its `${NAME}` variables substituted, written as compact JSON with sorted
    /// keys, so that comments, spacing and the order of keys do not show and two loads of the same profile with
    /// the same values give the same text (what a shard's report digests, so that `merge` can tell runs apart).
    /// - Parameters:
    ///   - data: the JSON5 text of the profile.
    ///   - variables: the values of `${NAME}` references.
    /// - Returns: the text, nil when the document does not parse or a variable is undefined (``load(path:variables:)``
    ///   says why).
    public static func effectiveText(of data: Data, variables: ProfileVariables = ProfileVariables()) -> String? {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        guard let tree = try? decoder.decode(JSONValue.self, from: data),
            let substituted = try? tree.substituting(variables)
        else { return nil }
        return substituted.jsonText
    }
}
