/// Metrics in Prometheus' text format, parsed into families of samples so that several sources
/// add up: a worker's `/metrics` is its own registry plus the metrics its items' processes
/// wrote. Counters and histograms (buckets, sums, counts) add; a gauge keeps its latest value.
///
/// ```swift
/// var total = PrometheusText(parsing: workerText)
/// total.add(PrometheusText(parsing: itemText))
/// print(total.rendered)
/// ```
package struct PrometheusText: Sendable {
    /// One metric family: its type and its samples (`name{labels}` to value) in first-seen order.
    struct Family: Sendable {
        var type: String
        var keys: [String] = []
        var values: [String: Double] = [:]
    }

    private(set) var names: [String] = []
    private(set) var families: [String: Family] = [:]

    package init() {}

    /// Parses `text`; lines it does not understand are left out.
    package init(parsing text: String) {
        var family: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                guard parts.count == 2 else { continue }
                family = String(parts[0])
                ensure(String(parts[0]), type: String(parts[1]))
                continue
            }
            if line.hasPrefix("#") { continue }
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let key = String(line[..<space])
            let name = family ?? String(key.prefix { $0 != "{" })
            ensure(name, type: "untyped")
            set(key, in: name, value, adding: false)
        }
    }

    /// Adds `other`'s samples: counters and histograms sum, gauges take `other`'s value.
    package mutating func add(_ other: PrometheusText) {
        for name in other.names {
            guard let theirs = other.families[name] else { continue }
            ensure(name, type: theirs.type)
            let adding = theirs.type != "gauge"
            for key in theirs.keys { set(key, in: name, theirs.values[key] ?? 0, adding: adding) }
        }
    }

    /// The text format, each family after its `# TYPE` line.
    package var rendered: String {
        var text = ""
        for name in names {
            guard let family = families[name] else { continue }
            text += "# TYPE \(name) \(family.type)\n"
            for key in family.keys { text += "\(key) \(Self.format(family.values[key] ?? 0))\n" }
        }
        return text
    }

    private mutating func ensure(_ name: String, type: String) {
        if families[name] == nil {
            names.append(name)
            families[name] = Family(type: type)
        }
    }

    private mutating func set(_ key: String, in name: String, _ value: Double, adding: Bool) {
        guard var family = families.removeValue(forKey: name) else { return }
        let earlier = family.values[key]
        if earlier == nil { family.keys.append(key) }
        family.values[key] = adding ? (earlier ?? 0) + value : value
        families[name] = family
    }

    /// Whole numbers without a decimal point, as the exporter writes counts.
    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
