/// One problem found in a profile: the file, the JSON path and what was expected there.
///
/// Its description is a single line, suitable for a command-line error:
/// `Profiles/x.json5: faults.duplicate.probability: expected a number from 0 to 1, found 1.5`.
/// Problems found in the text itself (a syntax error, a duplicated key) also carry their line and column,
/// written the way compilers do: `Profiles/x.json5:7:5: target.webhookURL: expected each key once …`.
public struct ProfileError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The profile file, as given by the caller.
    public var file: String
    /// The JSON path of the offending value, such as `faults.duplicate.probability` or `catalog.products[2].type`.
    /// Empty for a problem with the whole document (a syntax error).
    public var path: String
    /// What was expected at that path, and what was found when that helps.
    public var expected: String
    /// The 1-based line of the problem, when it is known (syntax errors and duplicated keys).
    public var line: Int?
    /// The 1-based column of the problem, in characters, when it is known.
    public var column: Int?

    /// Creates an error.
    public init(file: String, path: String, expected: String, line: Int? = nil, column: Int? = nil) {
        self.file = file
        self.path = path
        self.expected = expected
        self.line = line
        self.column = column
    }

    /// `file: path: expected …`, or `file:line:column: path: expected …`, on one line.
    public var description: String {
        let place = path.isEmpty ? "(document)" : path
        var location = file
        if let line {
            location += ":\(line)"
            if let column { location += ":\(column)" }
        }
        return "\(location): \(place): expected \(expected)"
    }
}

/// A problem raised while decoding, before the file name is known.
struct ProfileIssue: Error {
    var path: String
    var expected: String
}
