internal import Foundation

/// A ``ChunkedGzipLog`` compressed and written on a thread of its own, so that the thread producing the text
/// only appends bytes: the run's history is written by the engine's thread, between sends.
///
/// ``write(_:)`` hands a whole buffer over and gives back an empty one with the capacity of a buffer the
/// writer has finished with, so that after the first few neither side allocates. The writer compresses the
/// buffers in the order they came, each as one ``ChunkedGzipLog/write(_:)``, so the chunks are the ones a
/// ``ChunkedGzipLog`` written on the caller's thread would make. At most ``depth`` buffers wait: beyond that
/// the caller waits for the writer (a disk slower than the run), since nothing may be lost.
///
/// One producer at a time; ``close()`` waits until everything handed over is on disk.
public final class BackgroundGzipLog: @unchecked Sendable {
    /// Buffers that may wait for the writer before ``write(_:)`` waits too.
    public static let depth = 64

    /// Touched only by the writer thread until it has finished.
    private let log: ChunkedGzipLog
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queued: [[UInt8]] = []
    private var spare: [[UInt8]] = []
    private var closing = false
    private var finished = false
    private var dropped = (chunks: 0, lines: 0)
    private var failed = 0
    private var lateWrites = 0

    /// Creates the first chunk `directory/baseName-000001.jsonl.gz` on the caller's thread (so that a failure
    /// is thrown here) and starts the writer thread.
    /// - Parameters:
    ///   - directory: the folder the chunks go to (it must exist).
    ///   - baseName: the chunks' name before `-NNNNNN.jsonl.gz`.
    ///   - chunkBytes: text (uncompressed) bytes after which a chunk is closed and the next begun.
    ///   - capBytes: the most the chunks may take on disk together; the oldest go first.
    /// - Throws: ``OutputFileError`` naming the first chunk's path when it cannot be created.
    public init(directory: String, baseName: String, chunkBytes: Int, capBytes: Int) throws(OutputFileError) {
        log = try ChunkedGzipLog(directory: directory, baseName: baseName, chunkBytes: chunkBytes, capBytes: capBytes)
        let thread = Thread { [self] in drain() }
        thread.name = "paystorm-gzip"
        thread.start()
    }

    /// How many of the oldest chunks were deleted to stay under the cap, so far.
    public var droppedChunks: Int { locked { dropped.chunks } }
    /// How many lines those chunks held.
    public var droppedLines: Int { locked { dropped.lines } }
    /// Writes that failed (a full disk) or came after ``close()``, counted instead of stopping the run.
    public var failedWrites: Int { locked { failed + lateWrites } }

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Hands `buffer`'s bytes (whole lines) to the writer and leaves `buffer` empty, with the capacity of a
    /// buffer the writer is done with when there is one.
    public func write(_ buffer: inout [UInt8]) {
        guard !buffer.isEmpty else { return }
        condition.lock()
        defer { condition.unlock() }
        guard !closing else {
            lateWrites += 1
            buffer.removeAll(keepingCapacity: true)
            return
        }
        while queued.count >= Self.depth { condition.wait() }
        var full = spare.popLast() ?? []
        swap(&full, &buffer)
        queued.append(full)
        condition.broadcast()
    }

    /// Compresses what was handed over, closes the last chunk and stops the writer; returns when all of it
    /// is on disk. Later writes are counted in ``failedWrites``.
    public func close() {
        condition.lock()
        closing = true
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }

    deinit { close() }

    /// The writer thread: compresses each buffer in turn, outside the lock, and keeps it for reuse.
    private func drain() {
        condition.lock()
        while true {
            while queued.isEmpty && !closing { condition.wait() }
            guard !queued.isEmpty else { break }
            var text = queued.removeFirst()
            condition.unlock()
            log.write(text)
            text.removeAll(keepingCapacity: true)
            condition.lock()
            if spare.count < 4 { spare.append(text) }
            note()
            condition.broadcast()
        }
        condition.unlock()
        log.close()
        condition.lock()
        note()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// Copies the log's counts where other threads read them (under the lock).
    private func note() {
        dropped = (log.droppedChunks, log.droppedLines)
        failed = log.failedWrites
    }
}
