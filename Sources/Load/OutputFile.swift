#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Why an output file could not be created.
public struct OutputFileError: Error, Sendable, CustomStringConvertible {
    /// The path that failed.
    public var path: String
    /// The `errno` of the failing call.
    public var code: Int32

    public var description: String { "cannot write \(path): \(String(cString: strerror(code)))" }
}

/// A buffered, append-only text file on a POSIX descriptor, for the streamed run outputs.
///
/// One owner at a time (not Sendable); write errors after creation are counted, not thrown, so
/// that a full disk never stops a run.
final class OutputFile {
    private var descriptor: Int32
    private var buffer: [UInt8] = []
    private(set) var failedWrites = 0

    init(path: String) throws(OutputFileError) {
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw OutputFileError(path: path, code: errno) }
        buffer.reserveCapacity(64 * 1024)
    }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 64 * 1024 { flush() }
    }

    func write(bytes: ArraySlice<UInt8>) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 64 * 1024 { flush() }
    }

    func flush() {
        guard descriptor >= 0, !buffer.isEmpty else { return }
        var offset = 0
        buffer.withUnsafeBytes { bytes in
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failedWrites += 1
                    return
                }
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func close() {
        flush()
        if descriptor >= 0 {
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
    }

    deinit { close() }
}
