internal import Foundation

/// verifyReceipt's date text, `2026-01-01 00:00:00 Etc/GMT` and the same instant in Los Angeles, written by hand:
/// building a `DateFormatter` costs far more than the text (an answer writes several dates per purchase), and a
/// shared one is not safe across the server's threads. The bytes are those `DateFormatter` writes with
/// `yyyy-MM-dd HH:mm:ss` in `en_US_POSIX`.
enum ReceiptDateText {
    /// The zone of `_pst` dates; its offset (daylight saving time included) comes from `TimeZone`.
    static let losAngeles = TimeZone(identifier: "America/Los_Angeles") ?? .gmt

    /// Instants from 1970-01-02 to 9999-12-30 UTC, a day inside the years Foundation writes with four digits in
    /// both zones and after its calendar's switch from Julian; others go through `DateFormatter`.
    static let handWritten: ClosedRange<Int64> = 86_400_000...253_402_214_399_999

    /// `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    static func utc(_ milliseconds: Int64) -> String {
        guard handWritten.contains(milliseconds) else { return formatted(milliseconds, zone: "Etc/GMT") }
        return civil(milliseconds / 1000) + " Etc/GMT"
    }

    /// `yyyy-MM-dd HH:mm:ss America/Los_Angeles`, in the offset Los Angeles kept at that instant.
    static func pacific(_ milliseconds: Int64) -> String {
        guard handWritten.contains(milliseconds) else { return formatted(milliseconds, zone: "America/Los_Angeles") }
        let date = Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
        let offset = Int64(losAngeles.secondsFromGMT(for: date))
        return civil(milliseconds / 1000 + offset) + " America/Los_Angeles"
    }

    /// `yyyy-MM-dd HH:mm:ss` of seconds since 1970 (not negative) in the Gregorian calendar (days to civil date
    /// after Howard Hinnant's public-domain algorithm).
    static func civil(_ seconds: Int64) -> String {
        let days = seconds / 86_400
        let clock = seconds % 86_400
        let shifted = days + 719_468
        let era = shifted / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        var text = padded(year, 4) + "-" + padded(month, 2) + "-" + padded(day, 2) + " "
        text += padded(clock / 3600, 2) + ":" + padded(clock / 60 % 60, 2) + ":" + padded(clock % 60, 2)
        return text
    }

    private static func padded(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// Foundation's text, for the instants outside `handWritten` and for the tests' comparison.
    static func formatted(_ milliseconds: Int64, zone: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: zone)
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)) + " " + zone
    }
}
