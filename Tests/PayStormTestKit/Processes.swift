public import Foundation

/// Runs a program and waits for it.
/// - Parameters:
///   - executable: The program's path.
///   - arguments: Its arguments.
///   - input: Written to its standard input, which is then closed (closed at once when nil).
///   - directory: Its working folder (the test's when nil).
/// - Returns: Its exit status and its standard output and error, interleaved as written.
public func runProcess(
    _ executable: String,
    _ arguments: [String],
    input: String? = nil,
    in directory: URL? = nil
) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    let stdin = Pipe()
    process.standardInput = stdin
    try process.run()
    if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
    try stdin.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// The first executable of that name on `$PATH`, or nil.
public func findExecutable(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
        let candidate = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}
