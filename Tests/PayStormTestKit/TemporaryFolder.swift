public import Foundation

/// Makes a fresh, empty folder under the system's temporary folder; the caller removes it.
/// - Parameter prefix: The start of its name, to tell which test left it.
public func makeTemporaryFolder(_ prefix: String) throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Lends `body` a fresh, empty temporary folder and removes it afterwards, whether `body` returned or threw.
///
/// ```swift
/// try withTemporaryFolder("pki") { folder in
///     #expect(try PayStormBinary.run(["pki", "init", folder.path]).status == 0)
/// }
/// ```
public func withTemporaryFolder<Result>(_ prefix: String, _ body: (_ folder: URL) throws -> Result) throws -> Result {
    let folder = try makeTemporaryFolder(prefix)
    defer { try? FileManager.default.removeItem(at: folder) }
    return try body(folder)
}
