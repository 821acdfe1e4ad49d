import BatchRunKit

extension HTMLReportSection {
    /// Counts per job, entity, kind and outcome, then the first `HTMLReport.conflictLimit`
    /// conflicts with every property: key, original, store, ours and resolved values.
    package func conflicts(into html: inout Markup) {
        html.element(heading, text: "Conflicts")
        guard conflictCount > 0 else {
            html.element("p", ["class": "muted"], text: "No conflicts.")
            return
        }
        html.element("table", ["class": "conflict-counts"]) { table in
            Self.headerRow(["job", "entity", "kind", "outcome", "count"], numericFrom: 4, into: &table)
            for (group, count) in ReportPrinter.conflictCounts(report.conflicts) {
                table.element("tr") { row in
                    for (index, cell) in group.enumerated() {
                        row.element("td", index < 2 ? ["class": "name"] : [:], text: cell)
                    }
                    row.element("td", ["class": "n"], text: ReportPrinter.number(count))
                }
            }
        }
        let shown = report.conflicts.prefix(HTMLReport.conflictLimit)
        guard !shown.isEmpty else { return }
        html.element("p", text: shown.count < report.conflicts.count
            ? "The first \(shown.count) of \(ReportPrinter.number(report.conflicts.count)) conflicts; "
                + "the other \(ReportPrinter.number(report.conflicts.count - shown.count)) are in the JSON report."
            : "Every conflict:")
        html.element("div", ["class": "scroll"]) { scroll in
            scroll.element("table", ["class": "conflicts"]) { table in
                Self.headerRow(["job", "entity", "key", "kind", "policy", "outcome", "changed by", "property", "original",
                                "store", "ours", "resolved"], numericFrom: 99, into: &table)
                for record in shown { Self.conflictRows(record, into: &table) }
            }
        }
    }

    /// One row per property; the conflict's own cells span them.
    package static func conflictRows(_ record: MergeConflictRecord, into table: inout Markup) {
        let fields = Self.fields(record)
        let key = record.key.sorted { $0.key < $1.key }.map { "\($0.key)=\(text($0.value))" }.joined(separator: ", ")
        let span = String(max(1, record.properties.count))
        let head = [(record.job, "name"), (record.entity, "name"), (key, "value"), (fields.kind, ""), (fields.policy, ""),
                    (fields.outcome, ""), (record.changedBy, "name")]
        let properties = record.properties.isEmpty ? [nil] : record.properties.map(Optional.some)
        for (index, property) in properties.enumerated() {
            table.element("tr") { row in
                if index == 0 {
                    for (text, css) in head {
                        row.element("td", css.isEmpty ? ["rowspan": span] : ["class": css, "rowspan": span], text: text)
                    }
                }
                guard let property else {
                    for _ in 0..<5 { row.element("td", text: "") }
                    return
                }
                row.element("td", ["class": "name"], text: property.name)
                for value in [property.original, property.store, property.ours] {
                    row.element("td", ["class": "value"], text: text(value))
                }
                row.element("td", ["class": "value resolved"], text: text(property.resolved))
            }
        }
    }

    /// A value as the text report shows it (`NULL`, `41`, `'open'`), but a whole real number as
    /// the JSON report writes it (`10`, not `10.0`), so a page rendered from a saved report is
    /// the page the run wrote.
    package static func text(_ value: JSONValue) -> String {
        if case .real(let number) = value, number == number.rounded(), abs(number) < 1e15 {
            return String(Int64(number))
        }
        return value.description
    }

    /// A conflict's kind, policy and outcome as the JSON report spells them.
    package static func fields(_ record: MergeConflictRecord) -> (kind: String, policy: String, outcome: String) {
        (record.kind.rawValue, record.policy.rawValue, record.outcome.rawValue)
    }
}
