import Foundation
public import Testing

/// Expects `text` to equal the golden file `Snapshots/NAME` beside the calling test's source file.
///
/// With `RECORD_SNAPSHOTS=1` in the environment the file is rewritten first (never on CI: review the diff).
/// On a difference the failure names the file and the first line that differs, not the whole text.
/// - Parameters:
///   - text: What the code under test produced.
///   - name: The golden file's name in `Snapshots/`.
/// - Throws: When the golden file cannot be read or written.
public func expectSnapshot(
    _ text: String,
    named name: String,
    testFile: String = #filePath,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    let url = URL(fileURLWithPath: testFile).deletingLastPathComponent()
        .appendingPathComponent("Snapshots").appendingPathComponent(name)
    if ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] != nil {
        try Data(text.utf8).write(to: url)
    }
    let golden = try String(contentsOf: url, encoding: .utf8)
    guard text != golden else { return }
    let produced = text.split(separator: "\n", omittingEmptySubsequences: false)
    let recorded = golden.split(separator: "\n", omittingEmptySubsequences: false)
    let line =
        zip(produced, recorded).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(produced.count, recorded.count)
    let got = line < produced.count ? String(produced[line]) : "(end of text)"
    let want = line < recorded.count ? String(recorded[line]) : "(end of file)"
    Issue.record(
        "Snapshots/\(name) differs at line \(line + 1):\n  got:  \(got)\n  want: \(want)\n(RECORD_SNAPSHOTS=1 rewrites it)",
        sourceLocation: sourceLocation
    )
}
