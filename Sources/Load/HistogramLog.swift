public import Foundation

/// One line of an HdrHistogram interval log: a tagged histogram of one time window.
public struct HistogramLogEntry: Sendable, Equatable {
    /// The tag (PayStorm writes `<kind>.latency` and `<kind>.service`), or nil.
    public var tag: String?
    /// Seconds from the log's base time to the window's start.
    public var start: Double
    /// The window's length in seconds.
    public var length: Double
    /// The histogram of values recorded in the window (µs for PayStorm logs).
    public var histogram: Histogram

    /// Creates an entry.
    public init(tag: String?, start: Double, length: Double, histogram: Histogram) {
        self.tag = tag
        self.start = start
        self.length = length
        self.histogram = histogram
    }
}

/// Writes an HdrHistogram interval log, format version 1.3 (anchors §D.5), line by line so that
/// an interrupted run still leaves a readable log.
///
/// Values are microseconds; the `Interval_Max` column is in milliseconds (ratio 1000).
public final class HistogramLogWriter {
    private let output: OutputFile
    private let maxValueUnitRatio: Double

    /// Creates the log file and writes its header.
    /// - Parameters:
    ///   - path: the file to create (truncated if it exists).
    ///   - startTime: the run's start, written as `StartTime` and `BaseTime`.
    ///   - maxValueUnitRatio: divisor for the max column (1000 turns µs into ms).
    /// - Throws: ``OutputFileError`` when the file cannot be created.
    public init(path: String, startTime: Date, maxValueUnitRatio: Double = 1000) throws {
        output = try OutputFile(path: path)
        self.maxValueUnitRatio = maxValueUnitRatio
        let seconds = startTime.timeIntervalSince1970
        let stamp = ISO8601DateFormatter().string(from: startTime)
        output.write(
            """
            #[Histogram log format version 1.3]
            #[StartTime: \(String(format: "%.3f", seconds)) (seconds since epoch), \(stamp)]
            #[BaseTime: \(String(format: "%.3f", seconds)) (seconds since epoch)]
            "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"

            """
        )
        output.flush()
    }

    /// Appends one interval line.
    public func write(_ entry: HistogramLogEntry) {
        var line = ""
        if let tag = entry.tag { line += "Tag=\(tag)," }
        line += String(
            format: "%.3f,%.3f,%.3f,",
            entry.start,
            entry.length,
            Double(entry.histogram.maxValue) / maxValueUnitRatio
        )
        line += HistogramCodec.encodeBase64(entry.histogram)
        line += "\n"
        output.write(line)
    }

    /// Pushes buffered lines to the file.
    public func flush() { output.flush() }

    /// Flushes and closes the file.
    public func close() { output.close() }
}

/// Reads an HdrHistogram interval log (versions 1.2 and 1.3, V2 encodings).
public enum HistogramLogReader {
    /// The parsed content of a log.
    public struct Log: Sendable {
        /// `StartTime` in seconds since the epoch, when the log has one.
        public var startTime: Double?
        /// `BaseTime` in seconds since the epoch, when the log has one.
        public var baseTime: Double?
        /// The interval lines, in file order.
        public var entries: [HistogramLogEntry]

        /// The sum of every interval with `tag` (all intervals when nil).
        public func total(tag: String? = nil) -> Histogram {
            var sum = Histogram()
            for entry in entries where tag == nil || entry.tag == tag { sum.add(entry.histogram) }
            return sum
        }
    }

    /// Parses log text.
    /// - Throws: ``HistogramCodecError`` naming the first bad line.
    public static func parse(_ text: String) throws -> Log {
        var log = Log(startTime: nil, baseTime: nil, entries: [])
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: true).enumerated() {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#[StartTime:") {
                log.startTime = firstNumber(in: line.dropFirst(12))
                continue
            }
            if line.hasPrefix("#[BaseTime:") {
                log.baseTime = firstNumber(in: line.dropFirst(11))
                continue
            }
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix("\"") { continue }
            var rest = Substring(line)
            var tag: String?
            if rest.hasPrefix("Tag=") {
                guard let comma = rest.firstIndex(of: ",") else {
                    throw HistogramCodecError("line \(number + 1): tag without fields")
                }
                tag = String(rest[rest.index(rest.startIndex, offsetBy: 4)..<comma])
                rest = rest[rest.index(after: comma)...]
            }
            let fields = rest.split(separator: ",", maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count == 4, let start = Double(fields[0]), let length = Double(fields[1]) else {
                throw HistogramCodecError("line \(number + 1): expected start,length,max,histogram")
            }
            do {
                let histogram = try HistogramCodec.decodeBase64(fields[3])
                log.entries.append(HistogramLogEntry(tag: tag, start: start, length: length, histogram: histogram))
            } catch let error as HistogramCodecError {
                throw HistogramCodecError("line \(number + 1): \(error.message)")
            }
        }
        return log
    }

    /// Reads and parses a log file.
    /// - Throws: ``HistogramCodecError`` when the file cannot be read or parsed.
    public static func read(path: String) throws -> Log {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw HistogramCodecError("cannot read \(path)")
        }
        return try parse(String(decoding: data, as: UTF8.self))
    }

    private static func firstNumber(in text: Substring) -> Double? {
        let trimmed = text.drop(while: { $0 == " " })
        return Double(trimmed.prefix(while: { $0.isNumber || $0 == "." }))
    }
}
