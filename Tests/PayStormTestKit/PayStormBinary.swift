public import Foundation

/// The built `paystorm` binary and the package it was built from, for tests that run the whole program as a
/// user does.
///
/// ```swift
/// let (status, output) = try PayStormBinary.run(["pki", "init", folder.path])
/// ```
public enum PayStormBinary {
    /// The package's root folder (where `Package.swift`, `Profiles/` and `Reports/` are).
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The binary: `$PAYSTORM` (or `$PAYSTORM_BINARY`) when set, else the `paystorm` beside the test bundle,
    /// else `.build/debug/paystorm` in the package.
    /// - Throws: ``TestKitError`` when none of them is an executable file.
    public static func url() throws -> URL {
        var candidates: [URL] = []
        let environment = ProcessInfo.processInfo.environment
        if let override = environment["PAYSTORM"] ?? environment["PAYSTORM_BINARY"] {
            candidates.append(URL(fileURLWithPath: override))
        }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("paystorm"))
        for bundle in Bundle.allBundles {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("paystorm"))
        }
        candidates.append(packageRoot.appendingPathComponent(".build/debug/paystorm"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw TestKitError("cannot find the paystorm binary; build it or set PAYSTORM")
        }
        return found
    }

    /// Runs the binary in the package root (or `directory`) and waits for it.
    /// - Returns: Its exit status and its standard output and error, interleaved as written.
    public static func run(_ arguments: [String], in directory: URL? = nil) throws -> (status: Int32, output: String) {
        try runProcess(url().path, arguments, in: directory ?? packageRoot)
    }
}

/// A test kit helper could not do what it was asked (the message says what).
public struct TestKitError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// An error that says `description`.
    public init(_ description: String) { self.description = description }
}
