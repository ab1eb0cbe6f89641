internal import CZlib
internal import Foundation

/// An append-only text log written as numbered gzip chunks (`NAME-000001.jsonl.gz`, ...) under a cap on
/// their total size on disk, so that an hours-long soak keeps bounded disk.
///
/// A chunk is closed once it holds `chunkBytes` of text; when the chunks on disk exceed `capBytes`, the
/// oldest closed ones are deleted, and how many chunks and lines went is kept for the report. Every chunk is
/// a complete gzip file (`gzip -dc` or `zcat` reads it alone or the chunks concatenated in order). Each
/// `write` ends with a zlib sync flush, so an interrupted run leaves a readable prefix of its last chunk.
///
/// One owner at a time (not Sendable), like the other streamed run outputs. Write errors after creation are
/// counted, not thrown, so that a full disk never stops a run.
public final class ChunkedGzipLog {
    /// One chunk on disk.
    struct Chunk {
        var path: String
        var compressedBytes: Int
        var lines: Int
    }

    private let directory: String
    private let baseName: String
    private let chunkBytes: Int
    private let capBytes: Int
    private var closed: [Chunk] = []
    private var current: OutputFile?
    private var currentChunk = Chunk(path: "", compressedBytes: 0, lines: 0)
    private var currentText = 0
    private var stream = z_stream()
    private var streamOpen = false
    private var index = 0
    private var output = [UInt8](repeating: 0, count: 64 * 1024)

    /// How many of the oldest chunks were deleted to stay under the cap.
    public private(set) var droppedChunks = 0
    /// How many lines those chunks held.
    public private(set) var droppedLines = 0
    /// Writes that failed after the log was created (a full disk), counted instead of stopping the run.
    public var failedWrites: Int { failedOutputWrites + (current?.failedWrites ?? 0) }
    private var failedOutputWrites = 0

    /// Creates the first chunk `directory/baseName-000001.jsonl.gz`.
    /// - Parameters:
    ///   - directory: the folder the chunks go to (it must exist).
    ///   - baseName: the chunks' name before `-NNNNNN.jsonl.gz`.
    ///   - chunkBytes: text (uncompressed) bytes after which a chunk is closed and the next begun.
    ///   - capBytes: the most the chunks may take on disk together; the oldest go first.
    /// - Throws: ``OutputFileError`` naming the first chunk's path when it cannot be created.
    public init(directory: String, baseName: String, chunkBytes: Int, capBytes: Int) throws(OutputFileError) {
        self.directory = directory
        self.baseName = baseName
        self.chunkBytes = max(1, chunkBytes)
        self.capBytes = max(1, capBytes)
        try openNext()
    }

    /// The path of chunk `index` (1-based).
    public static func chunkPath(directory: String, baseName: String, index: Int) -> String {
        let digits = String(index)
        return directory + "/" + baseName + "-" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
            + ".jsonl.gz"
    }

    /// Compresses and appends `text` (whole lines) to the current chunk, then rotates and enforces the cap.
    public func write(_ text: [UInt8]) {
        guard streamOpen else {
            // The next chunk could not be created (a full disk): count it, as OutputFile does.
            failedOutputWrites += 1
            return
        }
        guard !text.isEmpty else { return }
        text.withUnsafeBufferPointer { bytes in
            deflate(bytes, mode: Z_SYNC_FLUSH)
            currentChunk.lines += Self.newlines(in: bytes)
        }
        currentText += text.count
        if currentText >= chunkBytes {
            finishCurrent()
            try? openNext()
        }
        enforceCap()
    }

    /// Finishes the current chunk's gzip stream and closes its file.
    public func close() {
        finishCurrent()
        enforceCap()
    }

    deinit { close() }

    private func openNext() throws(OutputFileError) {
        index += 1
        let path = Self.chunkPath(directory: directory, baseName: baseName, index: index)
        let file = try OutputFile(path: path)
        // windowBits 31 = 15 + 16: a gzip header and trailer, not a bare zlib stream. Level 1: JSON lines shrink
        // well even at the fastest level, and the run's CPU is better spent signing.
        stream = z_stream()
        let status = deflateInit2_(
            &stream,
            Z_BEST_SPEED,
            Z_DEFLATED,
            31,
            8,
            Z_DEFAULT_STRATEGY,
            ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size)
        )
        guard status == Z_OK else {
            file.close()
            throw OutputFileError(path: path, code: ENOMEM)
        }
        current = file
        currentChunk = Chunk(path: path, compressedBytes: 0, lines: 0)
        currentText = 0
        streamOpen = true
    }

    /// How many `\n` bytes `bytes` holds (whole lines: one per line).
    private static func newlines(in bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var count = 0
        for byte in bytes where byte == 0x0A { count += 1 }
        return count
    }

    /// Compresses `text` into the current chunk; zlib only reads the input, so it is not copied.
    private func deflate(_ text: UnsafeBufferPointer<UInt8>, mode: Int32) {
        stream.next_in = text.baseAddress.map { UnsafeMutablePointer(mutating: $0) }
        stream.avail_in = uInt(text.count)
        repeat {
            let status = output.withUnsafeMutableBufferPointer { outBuffer in
                stream.next_out = outBuffer.baseAddress
                stream.avail_out = uInt(outBuffer.count)
                return CZlib.deflate(&stream, mode)
            }
            let produced = output.count - Int(stream.avail_out)
            if produced > 0 {
                current?.write(bytes: output[0..<produced])
                currentChunk.compressedBytes += produced
            }
            if status == Z_STREAM_END { break }
            // A sync flush is complete when zlib left room in the output; a stream error cannot happen on
            // a stream this class initialised, but it must not loop forever either.
            if status != Z_OK && status != Z_BUF_ERROR {
                failedOutputWrites += 1
                break
            }
        } while stream.avail_out == 0 || stream.avail_in > 0
        current?.flush()
    }

    private func finishCurrent() {
        guard streamOpen else { return }
        deflate(UnsafeBufferPointer(start: nil, count: 0), mode: Z_FINISH)
        deflateEnd(&stream)
        streamOpen = false
        current?.close()
        if let failed = current?.failedWrites { failedOutputWrites += failed }
        current = nil
        closed.append(currentChunk)
    }

    /// Deletes the oldest closed chunks while everything on disk exceeds the cap; the chunk being written is
    /// never deleted.
    private func enforceCap() {
        var total = closed.reduce(0) { $0 + $1.compressedBytes } + (streamOpen ? currentChunk.compressedBytes : 0)
        while total > capBytes, closed.count > (streamOpen ? 0 : 1) {
            let oldest = closed.removeFirst()
            try? FileManager.default.removeItem(atPath: oldest.path)
            total -= oldest.compressedBytes
            droppedChunks += 1
            droppedLines += oldest.lines
        }
    }
}
