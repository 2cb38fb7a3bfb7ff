package import Foundation

/// HTTP dates (RFC 9110 §5.6.7): the IMF-fixdate form `Sun, 06 Nov 1994 08:49:37 GMT`, and for reading also
/// the obsolete RFC 850 and asctime forms. Parsed by hand: `DateFormatter` is slow and not `Sendable`.
package enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday

    /// The date `text` names, or `nil` when it is not an HTTP date.
    package static func parse(_ text: String) -> Date? {
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" }).map(String.init)
        var month: Int?
        var time: [Int]?
        var numbers: [(value: Int, digits: Int)] = []
        for token in tokens {
            if token.contains(":") {
                let parts = token.split(separator: ":").compactMap { Int($0) }
                guard parts.count == 3 else { return nil }
                time = parts
            } else if let number = Int(token) {
                numbers.append((number, token.count))
            } else if let index = months.firstIndex(of: token.lowercased()) {
                month = index + 1
            }
        }
        guard let month, let time, numbers.count == 2 else { return nil }
        // Day has one or two digits; the year has four, or two in the RFC 850 form (00–69 → 20xx).
        guard let dayIndex = numbers.firstIndex(where: { $0.digits <= 2 && (1...31).contains($0.value) }) else { return nil }
        let day = numbers[dayIndex].value
        let yearToken = numbers[1 - dayIndex]
        var year = yearToken.value
        if yearToken.digits == 2 { year += year < 70 ? 2000 : 1900 }
        guard (0..<24).contains(time[0]), (0..<60).contains(time[1]), (0...60).contains(time[2]) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + time[0] * 3600 + time[1] * 60 + time[2]
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// `date` in the IMF-fixdate form.
    package static func format(_ date: Date) -> String {
        let total = Int(date.timeIntervalSince1970.rounded(.down))
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let seconds = total - days * 86_400
        let (year, month, day) = civilFromDays(days)
        let weekday = weekdays[((days % 7) + 7) % 7]
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekday), \(two(day)) \(months[month - 1].capitalized) \(year) \(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60)) GMT"
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
