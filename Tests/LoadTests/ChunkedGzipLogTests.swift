import Foundation
import Testing

@testable import Load

/// The history's chunk writer: rotation at the chunk size, the cap on disk, and plain gzip files (one member per
/// write) that read whole after every write.
struct ChunkedGzipLogTests {
    /// A fresh folder for one test.
    static func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-chunks-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Lines that compress poorly (a counter and a pseudo-random hex word), so the cap is reached quickly.
    static func lines(_ range: Range<Int>) -> [String] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        return range.map { index in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return "{\"n\":\(index),\"noise\":\"\(String(state, radix: 16))\(String(state >> 7, radix: 16))\"}\n"
        }
    }

    /// `gzip -dc FILES...`: the text of the chunks, read by the tool a user would use.
    static func gunzip(_ paths: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-dc"] + paths
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "gzip -dc failed on \(paths)")
        return String(decoding: data, as: UTF8.self)
    }

    static func chunks(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".jsonl.gz") }.sorted()
            .map { folder + "/" + $0 }
    }

    @Test func rotatesAtTheChunkSizeIntoNumberedGzipFilesThatGzipReads() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = try ChunkedGzipLog(directory: folder, baseName: "history", chunkBytes: 4096, capBytes: 1 << 30)
        let lines = Self.lines(0..<1000)
        // Buffers of ten lines, as HistoryLog hands over whole lines.
        for start in stride(from: 0, to: lines.count, by: 10) {
            log.write(Array(lines[start..<start + 10].joined().utf8))
        }
        log.close()
        let chunks = try Self.chunks(in: folder)
        let total = lines.joined().utf8.count
        #expect(chunks.count >= total / 4096 && chunks.count <= total / 4096 + 1, "\(chunks.count) chunks")
        #expect(chunks.first == ChunkedGzipLog.chunkPath(directory: folder, baseName: "history", index: 1))
        #expect(chunks.first?.hasSuffix("/history-000001.jsonl.gz") == true)
        #expect(try Self.gunzip(chunks) == lines.joined())
        #expect(log.droppedChunks == 0 && log.droppedLines == 0)
    }

    @Test func everyChunkIsAWholeGzipFileAfterEveryWriteSoAnInterruptedRunLosesNoWrittenLine() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = try ChunkedGzipLog(directory: folder, baseName: "history", chunkBytes: 16 * 1024, capBytes: 1 << 30)
        let lines = Self.lines(0..<1200)
        for start in stride(from: 0, to: lines.count, by: 40) {
            log.write(Array(lines[start..<start + 40].joined().utf8))
            // Read before close, as after a SIGKILL: each write is a whole gzip member, so `gzip -dc` exits 0 and
            // gives every line written so far, the open chunk's included.
            if start % 200 == 0 { #expect(try Self.gunzip(Self.chunks(in: folder)) == lines[..<(start + 40)].joined()) }
        }
        log.close()
        let chunks = try Self.chunks(in: folder)
        #expect(chunks.count > 2)
        // Each chunk alone holds several members and reads alone; together they are the lines in order.
        #expect(try chunks.map { try Self.gunzip([$0]) }.joined() == lines.joined())
    }

    @Test func aChunkClosedBeforeAnyTextIsStillAGzipFile() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let text = Array(Self.lines(0..<100).joined().utf8)
        // The one write fills the first chunk, so the second is opened and closed empty.
        let log = try ChunkedGzipLog(directory: folder, baseName: "history", chunkBytes: text.count, capBytes: 1 << 30)
        log.write(text)
        log.close()
        let chunks = try Self.chunks(in: folder)
        #expect(chunks.count == 2)
        #expect(try Self.gunzip(Array(chunks.suffix(1))) == "")
        #expect(try Self.gunzip(chunks) == String(decoding: text, as: UTF8.self))
    }

    @Test func newlinesAreCountedEightBytesAtATimeAsOneByteAtATimeWould() {
        // Bytes next to `\n` in value (0x0B, 0x8A, 0x00, 0xFF, 0x7F) at every offset and length, tails included.
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        let alphabet: [UInt8] = [0x0A, 0x0A, 0x0B, 0x8A, 0x00, 0xFF, 0x7F, 0x09, 0x22, 0x7B]
        let bytes: [UInt8] = (0..<4096).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return alphabet[Int(state >> 33) % alphabet.count]
        }
        bytes.withUnsafeBytes { all in
            for start in 0..<9 {
                for length in [0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 100, 4000] where start + length <= all.count {
                    let slice = UnsafeRawBufferPointer(rebasing: all[start..<start + length])
                    let expected = slice.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                    #expect(ChunkedGzipLog.newlines(in: slice) == expected, "start \(start), length \(length)")
                }
            }
        }
    }

    @Test func dropsTheOldestChunksToStayUnderTheCapAndCountsTheirLines() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cap = 16 * 1024
        let log = try ChunkedGzipLog(directory: folder, baseName: "history", chunkBytes: 8192, capBytes: cap)
        let lines = Self.lines(0..<5000)
        for start in stride(from: 0, to: lines.count, by: 20) {
            log.write(Array(lines[start..<start + 20].joined().utf8))
            let onDisk = try Self.chunks(in: folder).reduce(0) {
                $0 + ((try FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0)
            }
            #expect(onDisk <= cap, "\(onDisk) bytes on disk over a cap of \(cap)")
        }
        log.close()
        let chunks = try Self.chunks(in: folder)
        #expect(log.droppedChunks > 0)
        #expect(!chunks.contains(ChunkedGzipLog.chunkPath(directory: folder, baseName: "history", index: 1)))
        // What is left is exactly the newest lines, and the dropped count covers the rest.
        let kept = try Self.gunzip(chunks)
        let keptLines = kept.split(separator: "\n").count
        #expect(keptLines + log.droppedLines == lines.count)
        #expect(kept == lines.suffix(keptLines).joined())
    }
}
