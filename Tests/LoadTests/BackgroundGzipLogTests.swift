import Foundation
import Load
import Testing

/// The history's chunks compressed on a thread of their own: the same files as on the caller's thread, buffers
/// handed back for reuse, and nothing lost at close.
struct BackgroundGzipLogTests {
    /// Buffers of `perBuffer` lines each, as the history hands them over.
    static func buffers(_ lines: [String], perBuffer: Int) -> [[UInt8]] {
        stride(from: 0, to: lines.count, by: perBuffer).map {
            Array(lines[$0..<min($0 + perBuffer, lines.count)].joined().utf8)
        }
    }

    static func bytes(of paths: [String]) throws -> [Data] {
        try paths.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
    }

    @Test func writesTheSameChunksAsTheCallersThreadWould() throws {
        let here = try ChunkedGzipLogTests.folder()
        let there = try ChunkedGzipLogTests.folder()
        defer {
            try? FileManager.default.removeItem(atPath: here)
            try? FileManager.default.removeItem(atPath: there)
        }
        let lines = ChunkedGzipLogTests.lines(0..<3000)
        let direct = try ChunkedGzipLog(directory: here, baseName: "history", chunkBytes: 8192, capBytes: 1 << 30)
        let background = try BackgroundGzipLog(
            directory: there,
            baseName: "history",
            chunkBytes: 8192,
            capBytes: 1 << 30
        )
        for var buffer in Self.buffers(lines, perBuffer: 37) {
            direct.write(buffer)
            background.write(&buffer)
            #expect(buffer.isEmpty)
        }
        direct.close()
        background.close()
        let ours = try ChunkedGzipLogTests.chunks(in: there)
        #expect(ours.count > 10)
        #expect(
            ours.map { ($0 as NSString).lastPathComponent }
                == (try ChunkedGzipLogTests.chunks(in: here)).map {
                    ($0 as NSString).lastPathComponent
                }
        )
        #expect(try Self.bytes(of: ours) == (try Self.bytes(of: ChunkedGzipLogTests.chunks(in: here))))
        #expect(try ChunkedGzipLogTests.gunzip(ours) == lines.joined())
        #expect(background.failedWrites == 0)
    }

    @Test func handsBackBuffersWithTheirCapacityOnceTheWriterIsDoneWithThem() throws {
        let folder = try ChunkedGzipLogTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = try BackgroundGzipLog(directory: folder, baseName: "history", chunkBytes: 1 << 20, capBytes: 1 << 30)
        let line = Array(#"{"t":1.000000,"event":"dispatch"}"#.utf8) + [0x0A]
        var buffer: [UInt8] = []
        var reused = false
        for _ in 0..<200 {
            buffer.append(contentsOf: repeatElement(line, count: 1000).joined())
            log.write(&buffer)
            #expect(buffer.isEmpty)
            reused = reused || buffer.capacity >= line.count * 1000
        }
        log.close()
        #expect(reused, "no buffer came back with its capacity")
        let text = try ChunkedGzipLogTests.gunzip(try ChunkedGzipLogTests.chunks(in: folder))
        #expect(text.utf8.count == line.count * 200_000)
    }

    @Test func theCapDropsTheOldestChunksAndAWriteAfterCloseIsCounted() throws {
        let folder = try ChunkedGzipLogTests.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cap = 64 * 1024
        let log = try BackgroundGzipLog(directory: folder, baseName: "history", chunkBytes: 8192, capBytes: cap)
        for var buffer in Self.buffers(ChunkedGzipLogTests.lines(0..<20_000), perBuffer: 50) {
            log.write(&buffer)
        }
        log.close()
        #expect(log.droppedChunks > 0 && log.droppedLines > 0)
        var late = Array("{}\n".utf8)
        log.write(&late)
        #expect(log.failedWrites == 1 && late.isEmpty)
        let onDisk = try ChunkedGzipLogTests.chunks(in: folder).reduce(0) {
            $0 + ((try FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0)
        }
        #expect(onDisk <= cap)
    }
}
