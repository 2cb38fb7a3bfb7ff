#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

/// HTTP dates (RFC 9110 §5.6.7): the IMF-fixdate form `Sun, 06 Nov 1994 08:49:37 GMT`, and for reading also
/// the obsolete RFC 850 and asctime forms. Parsed by hand: `DateFormatter` is slow and not `Sendable`.
package enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday

    private static let monthNames = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    private static let shortDays: Set<String> = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDays: Set<String> = [
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
    ]

    /// The date `text` names, or `nil` when it is not an HTTP date: exactly one of the three forms of RFC 9110
    /// §5.6.7, case as the grammar spells it —
    ///
    /// - IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`,
    /// - RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT` (a two-digit year more than 50 years ahead is taken from the
    ///   previous century, §5.6.7),
    /// - asctime `Sun Nov  6 08:49:37 1994`.
    ///
    /// Anything else (another zone, a two-digit year in the IMF form, a missing comma, extra spaces, a one-digit
    /// hour) is invalid, which RFC 9111 §5.3 reads as "already expired" for `Expires`, instead of a date guessed
    /// from its tokens.
    package static func parse(_ text: String, now: Date = Date()) -> Date? {
        let bytes = Array(text.utf8)
        guard let comma = bytes.firstIndex(of: UInt8(ascii: ",")) else { return asctime(bytes) }
        let dayName = String(decoding: bytes[..<comma], as: UTF8.self)
        let rest = Array(bytes[(comma + 1)...])
        if shortDays.contains(dayName) { return imfFixdate(rest) }
        if longDays.contains(dayName) { return rfc850(rest, now: now) }
        return nil
    }

    /// ` 06 Nov 1994 08:49:37 GMT`, after the day name and its comma.
    private static func imfFixdate(_ b: [UInt8]) -> Date? {
        guard b.count == 25, b[0] == sp, b[3] == sp, b[7] == sp, b[12] == sp, b[21] == sp, tail(b[22...]) == "GMT",
            let day = digits(b[1...2]), let month = month(b[4...6]), let year = digits(b[8...11]),
            let time = time(b[13...20])
        else { return nil }
        return date(year: year, month: month, day: day, time: time)
    }

    /// ` 06-Nov-94 08:49:37 GMT`, after the long day name and its comma.
    private static func rfc850(_ b: [UInt8], now: Date) -> Date? {
        guard b.count == 23, b[0] == sp, b[3] == dash, b[7] == dash, b[10] == sp, b[19] == sp, tail(b[20...]) == "GMT",
            let day = digits(b[1...2]), let month = month(b[4...6]), let twoDigits = digits(b[8...9]),
            let time = time(b[11...18])
        else { return nil }
        // §5.6.7: a two-digit year that appears more than 50 years in the future is the most recent past year
        // with those last digits.
        let thisYear = civilFromDays(Int((now.timeIntervalSince1970 / 86_400).rounded(.down))).year
        var year = thisYear - thisYear % 100 + twoDigits
        if year > thisYear + 50 { year -= 100 }
        return date(year: year, month: month, day: day, time: time)
    }

    /// `Sun Nov  6 08:49:37 1994`: the whole text, which has no comma.
    private static func asctime(_ b: [UInt8]) -> Date? {
        guard b.count == 24, b[3] == sp, b[7] == sp, b[10] == sp, b[19] == sp,
            shortDays.contains(tail(b[0...2])), let month = month(b[4...6]), let time = time(b[11...18]),
            let year = digits(b[20...23])
        else { return nil }
        let day: Int? = b[8] == sp ? digits(b[9...9]) : digits(b[8...9])
        guard let day else { return nil }
        return date(year: year, month: month, day: day, time: time)
    }

    private static let sp = UInt8(ascii: " ")
    private static let dash = UInt8(ascii: "-")

    private static func tail(_ b: ArraySlice<UInt8>) -> String { String(decoding: b, as: UTF8.self) }

    /// The number the ASCII digits in `b` spell; `nil` when any byte is not a digit. At most four digits reach
    /// here, so it cannot overflow.
    private static func digits(_ b: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in b {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func month(_ b: ArraySlice<UInt8>) -> Int? { monthNames.firstIndex(of: tail(b)).map { $0 + 1 } }

    /// `HH:MM:SS` as seconds into the day; the second may be 60 (a leap second).
    private static func time(_ b: ArraySlice<UInt8>) -> Int? {
        let start = b.startIndex
        guard b.count == 8, b[start + 2] == UInt8(ascii: ":"), b[start + 5] == UInt8(ascii: ":"),
            let hour = digits(b[start...(start + 1)]), let minute = digits(b[(start + 3)...(start + 4)]),
            let second = digits(b[(start + 6)...(start + 7)]), hour < 24, minute < 60, second <= 60
        else { return nil }
        return hour * 3600 + minute * 60 + second
    }

    /// The instant, when `day` exists in that month.
    private static func date(year: Int, month: Int, day: Int, time: Int) -> Date? {
        guard day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        return Date(
            timeIntervalSince1970: TimeInterval(daysFromCivil(year: year, month: month, day: day) * 86_400 + time)
        )
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// A cookie's `Expires` as RFC 6265 §5.1.1's cookie-date algorithm reads it, far more leniently than an HTTP
    /// date: tokens in any order between any delimiters, a two-digit year, one-digit fields.
    ///
    /// 1. The text is split into tokens at the delimiters.
    /// 2. Each token is tried, in order, against the time, day-of-month, month and year productions; the first
    ///    production it matches that has not been found yet takes it, and the rest are skipped.
    /// 3. A year from 70 to 99 gets 1900 added; 4. one from 0 to 69 gets 2000.
    /// 5. The date fails when a part is missing, the day is not 1–31, the year is before 1601, or the hour, minute
    ///    or second is out of range (a time token that matched is kept even when out of range, so
    ///    `91:22:33 21:01:22` fails rather than falling back to the second time).
    /// 6. A day the month does not have (30 February) fails too.
    package static func parseCookieDate(_ text: String) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        for token in cookieDateTokens(text) {
            if time == nil, let parsed = cookieTime(token) {
                time = parsed
            } else if day == nil, let value = leadingDigits(token, count: 1...2) {
                day = value
            } else if month == nil, token.count >= 3, let index = months.firstIndex(of: cookieMonth(token)) {
                month = index + 1
            } else if year == nil, let value = leadingDigits(token, count: 2...4) {
                year = value
            }
        }
        guard var year, let month, let day, let time else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59 else {
            return nil
        }
        return date(year: year, month: month, day: day, time: time.hour * 3600 + time.minute * 60 + time.second)
    }

    /// Step 1: the tokens between RFC 6265's delimiters (`%x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E`).
    static func cookieDateTokens(_ text: String) -> [ArraySlice<UInt8>] {
        Array(text.utf8).split { byte in
            byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte)
                || (0x5B...0x60).contains(byte) || (0x7B...0x7E).contains(byte)
        }
    }

    /// `time = hms-time ( non-digit *OCTET )` with `hms-time = time-field ":" time-field ":" time-field` and each
    /// field one or two digits; the values are not checked here (step 5 does).
    static func cookieTime(_ token: ArraySlice<UInt8>) -> (hour: Int, minute: Int, second: Int)? {
        var rest = token[...]
        var fields: [Int] = []
        for index in 0..<3 {
            let digits = rest.prefix { isDigit($0) }
            guard (1...2).contains(digits.count), let value = self.digits(digits) else { return nil }
            fields.append(value)
            rest = rest.dropFirst(digits.count)
            if index < 2 {
                guard rest.first == UInt8(ascii: ":") else { return nil }
                rest = rest.dropFirst()
            }
        }
        return (fields[0], fields[1], fields[2])  // what follows the third field starts with a non-digit
    }

    /// `count` digits followed by a non-digit or the end (the day-of-month and year productions).
    private static func leadingDigits(_ token: ArraySlice<UInt8>, count: ClosedRange<Int>) -> Int? {
        let digits = token.prefix { isDigit($0) }
        return count.contains(digits.count) ? self.digits(digits) : nil
    }

    /// A month token's first three letters, lowercased: `month = ( "jan" / … ) *OCTET`, case-insensitive.
    private static func cookieMonth(_ token: ArraySlice<UInt8>) -> String {
        String(decoding: token.prefix(3), as: UTF8.self).lowercased()
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// `date` in the IMF-fixdate form.
    package static func format(_ date: Date) -> String {
        let total = Int(date.timeIntervalSince1970.rounded(.down))
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let seconds = total - days * 86_400
        let (year, month, day) = civilFromDays(days)
        let weekday = weekdays[((days % 7) + 7) % 7]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return
            "\(weekday), \(two(day)) \(months[month - 1].capitalized) \(year) \(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60)) GMT"
    }

    // Howard Hinnant's days-from-civil and its inverse: exact for the proleptic Gregorian calendar.
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp + (mp < 10 ? 3 : -9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
