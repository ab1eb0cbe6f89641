import Foundation

@testable import Signing

/// A PKI generated once per test process (key generation is the slow part).
let sharedPKI: TestPKI = {
    do { return try TestPKI.generate() } catch { fatalError("cannot generate the test PKI: \(error)") }
}()

/// A fresh temporary directory, removed by the caller.
func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "paystorm-signing-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Runs a program and returns its exit status and combined output.
func runProcess(_ executable: String, _ arguments: [String], input: String? = nil) throws -> (Int32, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
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

/// The first executable of that name on a few usual paths, or nil.
func findExecutable(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
        let candidate = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}

/// Whether Python with Apple's app-store-server-library is installed here.
let pythonLibraryAvailable: Bool = {
    guard let python = findExecutable("python3") else { return false }
    return (try? runProcess(python, ["-c", "import appstoreserverlibrary"]))?.0 == 0
}()
