import BatchRunKit
import Foundation

/// `batchrun queue QUEUE --html FILE.html`: a queue's items as one self-contained page (the run
/// report's style, no scripts, no links): counts per state, then each state's items with what
/// `queue` prints, and for finished items their run's status, time and rows, from the report the
/// queue keeps of them (`Queue.output(of:)`). The same page for a folder and for PostgreSQL.
///
/// ```swift
/// let queue = try openQueue(at: "var/queue")
/// let page = QueueHTMLPage(listing: try queue.snapshot(), queue: queue).render()
/// ```
package struct QueueHTMLPage {
    package let listing: QueueSnapshot
    package let queue: any Queue

    package init(listing: QueueSnapshot, queue: any Queue) {
        self.listing = listing
        self.queue = queue
    }

    package func render() -> String {
        HTMLReport.page(title: "batchrun queue: \(listing.queue)") { body in
            body.element("dl", ["class": "facts"]) { facts in
                facts.element("dt", text: "queue")
                facts.element("dd", text: listing.queue)
                facts.element("dt", text: "listed")
                facts.element("dd", text: ReportTheme.timestamp(Date()))
                facts.element("dt", text: "items")
                facts.element("dd", ["class": "counts"]) { counts in
                    for state in QueueItemState.allCases {
                        counts.element("span") { item in
                            HTMLReportSection.dot(Self.color(state), into: &item)
                            item.text("\(listing.counts[state.rawValue] ?? 0) \(state.rawValue)")
                        }
                    }
                }
            }
            for state in QueueItemState.allCases {
                let items = listing.items.filter { $0.state == state }
                body.newline()
                body.element("h2", text: "\(state.rawValue)\(listing.statesAreFolders ? "/" : "") (\(items.count))")
                guard !items.isEmpty else {
                    body.element("p", ["class": "empty"], text: "No items.")
                    continue
                }
                body.element("div", ["class": "scroll"]) { scroll in
                    scroll.element("table", ["class": "items \(state.rawValue)"]) { table in
                        HTMLReportSection.headerRow(["item", "state", "run", "elapsed", "rows", "details"], numericFrom: 3, upTo: 5,
                                                    into: &table)
                        for item in items { row(item, into: &table) }
                    }
                }
            }
            body.element("footer", text: "Written by batchrun \(BatchRunVersion.current). Self-contained: no scripts, nothing loaded from the network.")
        }
    }

    private func row(_ item: QueueSnapshot.Item, into table: inout Markup) {
        let finished = item.state == .done || item.state == .failed || item.state == .cancelled
        let report = finished ? (try? queue.output(of: item.key))??.report.flatMap { try? RunReport(jsonData: Data($0.utf8)) } : nil
        table.element("tr", item.state == .failed ? ["class": "failed"] : [:]) { row in
            row.element("td", ["class": "name"], text: item.key == item.name ? item.name : "\(item.key) \(item.name)")
            row.element("td", ["class": "status"]) { cell in
                HTMLReportSection.dot(Self.color(item.state), into: &cell)
                cell.text(item.orphaned == true ? "orphaned" : item.state.rawValue)
            }
            if let report {
                row.element("td") { HTMLReport.badge(report.status, into: &$0) }
                row.element("td", ["class": "n"], text: DurationFormat.compact.string(report.elapsedSeconds))
                let rows = report.jobs.reduce(0) { $0 + $1.rows.fetched + $1.rows.inserted + $1.rows.updated + $1.rows.deleted }
                row.element("td", ["class": "n"], text: ReportPrinter.number(rows))
            } else {
                row.element("td", text: "–")
                row.element("td", ["class": "n"], text: "–")
                row.element("td", ["class": "n"], text: item.rows.map(ReportPrinter.number) ?? "–")
            }
            row.element("td", text: details(item, report: report))
        }
    }

    private func details(_ item: QueueSnapshot.Item, report: RunReport?) -> String {
        var parts: [String] = []
        if item.orphaned == true { parts.append("its worker is gone; the next worker takes it over") }
        if let process = item.process { parts.append("process \(process)") }
        if let worker = item.worker { parts.append("worker \(worker)") }
        if let jobs = item.jobs, !jobs.isEmpty { parts.append("running \(jobs.joined(separator: ", "))") }
        if let report {
            let failed = report.jobs.filter { $0.status == .failed || $0.status == .timedOut }.map(\.name)
            parts.append("\(report.jobs.count) job\(report.jobs.count == 1 ? "" : "s")" + (failed.isEmpty ? "" : ", failed: \(failed.joined(separator: ", "))"))
        }
        if item.priority != 0 { parts.append("priority \(item.priority)") }
        if let runAt = item.runAt { parts.append(item.state == .retryable ? "next try \(runAt)" : "due \(runAt)") }
        if item.attempts > 0, item.maxAttempts > 1 { parts.append("attempt \(item.attempts) of \(item.maxAttempts)") }
        if item.cancelling == true { parts.append("being cancelled") }
        if let error = item.error { parts.append("error: \(error)") }
        return parts.joined(separator: " · ")
    }

    package static func color(_ state: QueueItemState) -> String {
        switch state {
        case .pending: return ReportTheme.queued
        case .scheduled: return "#7e57c2"
        case .retryable: return "#ef6c00"
        case .cancelled: return "#757575"
        case .running: return "#1565c0"
        case .done: return ReportTheme.color(JobStatus.ok)
        case .failed: return ReportTheme.color(JobStatus.failed)
        }
    }
}
