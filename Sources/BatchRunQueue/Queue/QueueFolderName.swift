import Foundation

/// The name of an item `submit` writes into a queue folder, which sorts in run order: higher
/// priority first, then due time, then the submission's number.
///
/// `[PRIORITY-]YYYYMMDDTHHMMSSmmm-NNNN-NAME.yaml`, the time the item is due (its submission's,
/// unless `--at` or `--in` gave a later one), in UTC. Priority 0 has no prefix; a priority
/// above 0 is `+` and 100000 - N in five digits (`+99995-` for 5: sorts before the digits),
/// one below 0 is `~` and -N in five digits (`~00002-` for -2: sorts after the digits and
/// letters). An item dropped by hand under any other name has priority 0 and is due at once.
///
/// ```swift
/// let name = QueueFolderName(priority: 5, due: Date(), number: 1, base: "nightly").text
/// QueueFolderName.priority(of: name)   // 5
/// ```
package struct QueueFolderName: Sendable, Hashable {
    package var priority: Int
    package var due: Date
    package var number: Int
    package var base: String

    package init(priority: Int, due: Date, number: Int, base: String) {
        self.priority = priority
        self.due = due
        self.number = number
        self.base = base
    }

    package var text: String { Self.prefix(priority) + "\(Self.stamp(due))-\(String(format: "%04d", number))-\(base).yaml" }

    /// The priority prefix: empty for 0.
    package static func prefix(_ priority: Int) -> String {
        if priority > 0 { return "+" + String(format: "%05d", 100_000 - priority) + "-" }
        if priority < 0 { return "~" + String(format: "%05d", -priority) + "-" }
        return ""
    }

    /// An item's priority, from its name (0 for a name without the prefix).
    package static func priority(of name: String) -> Int {
        guard let first = name.first, first == "+" || first == "~", name.count > 7,
              let digits = Int(name.dropFirst().prefix(5)), name.dropFirst(6).first == "-" else { return 0 }
        return first == "+" ? 100_000 - digits : -digits
    }

    /// The due time an item's name carries (`YYYYMMDDTHHMMSSmmm` after its priority prefix);
    /// nil for a name dropped by hand.
    package static func dueStamp(of name: String) -> Substring? {
        let rest = priority(of: name) == 0 && !name.hasPrefix("+") && !name.hasPrefix("~") ? Substring(name) : name.dropFirst(7)
        let stamp = rest.prefix(18)
        guard stamp.count == 18, stamp.dropFirst(8).first == "T",
              stamp.enumerated().allSatisfy({ $0.offset == 8 || $0.element.isASCII && $0.element.isNumber }) else { return nil }
        return stamp
    }

    /// The due time an item's name carries, as a date.
    package static func due(of name: String) -> Date? {
        guard let stamp = dueStamp(of: name) else { return nil }
        var components = DateComponents()
        let digits = Array(stamp.filter(\.isNumber))
        func number(_ range: Range<Int>) -> Int { Int(String(digits[range]))! }
        components.year = number(0..<4)
        components.month = number(4..<6)
        components.day = number(6..<8)
        components.hour = number(8..<10)
        components.minute = number(10..<12)
        components.second = number(12..<14)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: components).map { $0.addingTimeInterval(Double(number(14..<17)) / 1000) }
    }

    /// `YYYYMMDDTHHMMSSmmm` in UTC.
    package static func stamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: date)
        return String(format: "%04d%02d%02dT%02d%02d%02d%03d", c.year!, c.month!, c.day!, c.hour!, c.minute!, c.second!,
                      c.nanosecond! / 1_000_000)
    }
}
