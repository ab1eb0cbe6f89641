import Foundation
import Primitives
import Testing

@testable import Load

struct HistogramTests {
    @Test func defaultLayoutMatchesHdrHistogram() {
        let histogram = Histogram()
        // anchors §D.2: 1 µs..1 h at 3 digits = 2048 sub-buckets × 22 buckets = 23,552 counters.
        #expect(histogram.subBucketCount == 2048)
        #expect(histogram.bucketCount == 22)
        #expect(histogram.countsLength == 23_552)
    }

    @Test(arguments: [Int64(0), 1, 1000, 2047, 2048, 2049, 123_456, 999_999_999, 3_600_000_000])
    func recordedValuesStayWithinThePrecision(value: Int64) {
        var histogram = Histogram()
        histogram.record(value)
        let reported = histogram.value(atPercentile: 50)
        #expect(reported == value)  // a single value: clamped to the exact min and max
        #expect(histogram.lowestEquivalent(value) <= value && value <= histogram.highestEquivalent(value))
        #expect(Double(histogram.sizeOfEquivalentRange(value)) <= max(1, Double(value) / 1000))
    }

    @Test func percentilesAreNeverAboveTheMax() {
        var histogram = Histogram()
        for value in stride(from: Int64(1000), through: 1_000_000, by: 997) { histogram.record(value) }
        for percentile in [0.0, 50, 90, 99, 99.9, 99.99, 100] {
            #expect(histogram.value(atPercentile: percentile) <= histogram.maxValue)
        }
        #expect(histogram.value(atPercentile: 100) == histogram.maxValue)
    }

    @Test func percentilesOfAUniformRangeAreAccurate() {
        var histogram = Histogram()
        for value in Int64(1)...100_000 { histogram.record(value) }
        for percentile in [50.0, 90, 99, 99.9] {
            let expected = percentile / 100 * 100_000
            let reported = Double(histogram.value(atPercentile: percentile))
            #expect(abs(reported - expected) / expected < 0.001)
        }
        #expect(histogram.totalCount == 100_000)
        #expect(abs(histogram.mean - 50_000.5) < 0.01)
    }

    @Test func valuesAboveTheRangeAreClampedAndCounted() {
        var histogram = Histogram(highest: 10_000)
        histogram.record(50_000)
        histogram.record(-3)
        #expect(histogram.clampedCount == 1)
        #expect(histogram.maxValue == 10_000)
        #expect(histogram.minValue == 0)
    }

    @Test func addIsExactAssociativeAndCommutative() {
        var a = Histogram()
        var b = Histogram()
        var c = Histogram()
        var all = Histogram()
        var generator = SplitMix64(seed: 42)
        for index in 0..<30_000 {
            let value = Int64(generator.next() % 5_000_000)
            all.record(value)
            switch index % 3 {
            case 0: a.record(value)
            case 1: b.record(value)
            default: c.record(value)
            }
        }
        var left = a
        left.add(b)
        left.add(c)
        var right = c
        var bc = b
        bc.add(a)
        right.add(bc)
        #expect(left.counts == all.counts)
        #expect(right.counts == all.counts)
        #expect(left.totalCount == all.totalCount && left.maxValue == all.maxValue && left.minValue == all.minValue)
    }

    @Test func addAcrossLayoutsKeepsCountsWithinPrecision() {
        var coarse = Histogram(lowest: 1, highest: 60_000_000, significantDigits: 2)
        coarse.record(123_456, count: 10)
        var fine = Histogram()
        fine.add(coarse)
        #expect(fine.totalCount == 10)
        #expect(abs(Double(fine.value(atPercentile: 50)) - 123_456) / 123_456 < 0.01)
    }

    @Test(arguments: [[Int64](), [1], [5, 5, 5], [0, 1_000_000, 3_600_000_000], Array(Int64(1)...5000)])
    func codecRoundTripsCounts(values: [Int64]) throws {
        var histogram = Histogram()
        for value in values { histogram.record(value) }
        let decoded = try HistogramCodec.decodeBase64(HistogramCodec.encodeBase64(histogram))
        #expect(decoded.counts == histogram.counts)
        #expect(decoded.totalCount == histogram.totalCount)
    }

    @Test func zigZagCoversTheFullRange() {
        for value: Int64 in [0, 1, -1, 63, -64, 64, 1 << 20, -(1 << 40), Int64.max, Int64.min] {
            var bytes: [UInt8] = []
            HistogramCodec.putZigZag(value, into: &bytes)
            var position = 0
            #expect(bytes.count <= 9)
            #expect(HistogramCodec.getZigZag(bytes, at: &position, end: bytes.count) == value)
        }
    }

    @Test(arguments: ["not base64!", "AAAA", "HISTFAAAAEV42pNpmSzMwMCgyAABTBDK"])
    func decodeRejectsBadInput(text: String) {
        #expect(throws: HistogramCodecError.self) { try HistogramCodec.decodeBase64(text) }
    }

    @Test func decodesAJavaWrittenHistogram() throws {
        // From HdrHistogram's own tagged-Log.logV2.hlog (anchors §D.5), written by the Java library.
        let histogram = try HistogramCodec.decodeBase64(
            "HISTFAAAAEV42pNpmSzMwMCgyAABTBDKT4GBgdnNYMcCBvsPEBEJISEuATEZMQ4uASkhIR4nrxg9v2lMaxhvMekILGZkKmcCAEf2CsI="
        )
        #expect(histogram.totalCount > 0)
    }

    @Test func decodesAHistogramEncodedByPythonHdrhistogram() throws {
        // Encoded by PyPI hdrhistogram 0.10.8: HdrHistogram(1, 3_600_000_000, 3) holding
        // 1, 7, 1000, 2047, 2048, 123456, 999999, 3600000000 once and 5000 a hundred times.
        let histogram = try HistogramCodec.decodeBase64(
            "HISTFAAAADl4nJNpmSzMwMAgyQABzFCaEURcm7yEwf4DVICJk2k/P9NqASamg8InGE97Ma01YFq8h5EJABGICzI="
        )
        var expected = Histogram()
        for value: Int64 in [1, 7, 1000, 2047, 2048, 123_456, 999_999, 3_600_000_000] { expected.record(value) }
        expected.record(5000, count: 100)
        #expect(histogram.counts == expected.counts)
        #expect(histogram.totalCount == 108)
        // Python reports 5003 and 1000447 (highest equivalent values); so do we.
        #expect(histogram.value(atPercentile: 50) == 5003)
        #expect(histogram.value(atPercentile: 99) == 1_000_447)
    }

    @Test func intervalLogRoundTripsThroughAFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hlog-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/latency.hlog"
        let writer = try HistogramLogWriter(path: path, startTime: Date(timeIntervalSince1970: 1_700_000_000))
        var first = Histogram()
        var second = Histogram()
        for value in Int64(100)...2000 { first.record(value) }
        second.record(1_500_000)
        writer.write(HistogramLogEntry(tag: "webhook.latency", start: 0, length: 1, histogram: first))
        writer.write(HistogramLogEntry(tag: nil, start: 1, length: 1, histogram: second))
        writer.close()

        let log = try HistogramLogReader.read(path: path)
        #expect(log.startTime == 1_700_000_000)
        #expect(log.entries.count == 2)
        #expect(log.entries[0].tag == "webhook.latency")
        #expect(log.entries[0].histogram.counts == first.counts)
        #expect(log.entries[1].tag == nil)
        #expect(log.total().totalCount == first.totalCount + 1)
        #expect(log.total(tag: "webhook.latency").totalCount == first.totalCount)
    }

    @Test func logReaderNamesTheBadLine() {
        #expect(throws: HistogramCodecError("line 2: expected start,length,max,histogram")) {
            try HistogramLogReader.parse("#[StartTime: 1.0 (seconds since epoch), x]\n1.0,2.0\n")
        }
    }

    @Test func cumulativeCountsAreTheValuesAtOrBelowEachBound() {
        var histogram = Histogram()
        for value: Int64 in [500, 1000, 1500, 3000, 2_000_000] { histogram.record(value) }
        #expect(
            histogram.cumulativeCounts(atOrBelow: [-1, 999, 1000, 2500, 1_000_000, 5_000_000]) == [0, 1, 2, 3, 4, 5]
        )
        // A bound past the highest trackable value holds everything; an empty histogram holds nothing.
        #expect(histogram.cumulativeCounts(atOrBelow: [.max]) == [5])
        #expect(Histogram().cumulativeCounts(atOrBelow: [1, 1_000_000]) == [0, 0])
    }
}
