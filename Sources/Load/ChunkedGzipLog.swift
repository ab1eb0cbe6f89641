internal import CDeflate
internal import Foundation

/// An append-only text log written as numbered gzip chunks (`NAME-000001.jsonl.gz`, ...) under a cap on
/// their total size on disk, so that an hours-long soak keeps bounded disk.
///
/// A chunk is closed once it holds `chunkBytes` of text; when the chunks on disk exceed `capBytes`, the
/// oldest closed ones are deleted, and how many chunks and lines went is kept for the report. Each `write`
/// compresses its text whole into one gzip member (libdeflate, level 1) and appends it to the current chunk,
/// so every chunk is a series of complete members: a valid gzip file (RFC 1952) that `gzip -dc` or `zcat`
/// reads alone or with the chunks concatenated in order, even when the run was interrupted after any `write`.
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
    /// libdeflate's level 1: JSON lines shrink well even at the fastest level, and the run's CPU is better
    /// spent signing. Whole-buffer compression at this level is about twice as fast as zlib's streaming deflate.
    private let compressor: OpaquePointer
    private var closed: [Chunk] = []
    /// The chunk being written; nil once closed, or when the next one could not be created.
    private var current: OutputFile?
    private var currentChunk = Chunk(path: "", compressedBytes: 0, lines: 0)
    private var currentText = 0
    private var index = 0
    /// Reused for every member; grown to libdeflate's bound for the largest text written.
    private var output: [UInt8] = []

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
        guard let compressor = libdeflate_alloc_compressor(1) else {
            throw OutputFileError(
                path: Self.chunkPath(directory: directory, baseName: baseName, index: 1),
                code: ENOMEM
            )
        }
        self.compressor = compressor
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

    /// Compresses `text` (whole lines) into one gzip member of the current chunk, then rotates and enforces
    /// the cap.
    public func write(_ text: [UInt8]) {
        guard current != nil else {
            // The next chunk could not be created (a full disk): count it, as OutputFile does.
            failedOutputWrites += 1
            return
        }
        guard !text.isEmpty else { return }
        text.withUnsafeBytes { bytes in
            appendMember(bytes)
            currentChunk.lines += Self.newlines(in: bytes)
        }
        currentText += text.count
        if currentText >= chunkBytes {
            finishCurrent()
            try? openNext()
        }
        enforceCap()
    }

    /// Closes the current chunk's file.
    public func close() {
        finishCurrent()
        enforceCap()
    }

    deinit {
        close()
        libdeflate_free_compressor(compressor)
    }

    private func openNext() throws(OutputFileError) {
        index += 1
        let path = Self.chunkPath(directory: directory, baseName: baseName, index: index)
        current = try OutputFile(path: path)
        currentChunk = Chunk(path: path, compressedBytes: 0, lines: 0)
        currentText = 0
    }

    /// How many `\n` bytes `bytes` holds (whole lines: one per line), eight bytes at a time (a byte at a time
    /// would take a tenth of the compressing thread's time).
    static func newlines(in bytes: UnsafeRawBufferPointer) -> Int {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let low = ones &* 0x7F
        var count = 0
        var offset = 0
        while offset + 8 <= bytes.count {
            // A `\n` byte becomes zero; a byte's high bit is then set unless it is zero (no carry crosses bytes).
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ (ones &* 0x0A)
            let nonzero = ((word & low) &+ low) | word
            // One bit a byte, summed into the top byte by the multiply (the baseline x86-64 has no popcnt).
            count &+= Int(truncatingIfNeeded: (((~nonzero >> 7) & ones) &* ones) >> 56)
            offset += 8
        }
        while offset < bytes.count {
            count &+= bytes[offset] == 0x0A ? 1 : 0
            offset += 1
        }
        return count
    }

    /// Compresses `text` into one gzip member, appends it to the current chunk and writes it out, so that
    /// the chunk on disk always ends on a whole member.
    private func appendMember(_ text: UnsafeRawBufferPointer) {
        let bound = libdeflate_gzip_compress_bound(compressor, text.count)
        if output.count < bound { output = [UInt8](repeating: 0, count: bound) }
        let produced = output.withUnsafeMutableBytes { out in
            libdeflate_gzip_compress(compressor, text.baseAddress, text.count, out.baseAddress, out.count)
        }
        // The output holds the bound, so this cannot fail; if it did, the text would be lost: count it.
        guard produced > 0 else {
            failedOutputWrites += 1
            return
        }
        current?.write(bytes: output[0..<produced])
        current?.flush()
        currentChunk.compressedBytes += produced
    }

    private func finishCurrent() {
        guard let file = current else { return }
        // A chunk closed before any text still holds one (empty) member: an empty file is not a gzip file.
        if currentChunk.compressedBytes == 0 {
            let nothing: [UInt8] = [0]
            nothing.withUnsafeBytes { appendMember(UnsafeRawBufferPointer(rebasing: $0[0..<0])) }
        }
        file.close()
        failedOutputWrites += file.failedWrites
        current = nil
        closed.append(currentChunk)
    }

    /// Deletes the oldest closed chunks while everything on disk exceeds the cap; the chunk being written is
    /// never deleted.
    private func enforceCap() {
        let open = current != nil
        var total = closed.reduce(0) { $0 + $1.compressedBytes } + (open ? currentChunk.compressedBytes : 0)
        while total > capBytes, closed.count > (open ? 0 : 1) {
            let oldest = closed.removeFirst()
            try? FileManager.default.removeItem(atPath: oldest.path)
            total -= oldest.compressedBytes
            droppedChunks += 1
            droppedLines += oldest.lines
        }
    }
}
