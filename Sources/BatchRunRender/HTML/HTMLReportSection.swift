import BatchRunKit
import Foundation

/// One job file's part of the HTML report.
package struct HTMLReportSection {
    package let section: HTMLReport.Section
    /// Numbers the section's ids (`file-2`, `arrow-2`) so several sections can share a page.
    package let number: Int
    /// With several sections, each opens with its file's name.
    package let titled: Bool

    package var report: RunReport { section.report }
    package var heading: String { titled ? "h3" : "h2" }
    /// Every conflict met: the records, or the jobs' counts when a report has fewer records.
    package var conflictCount: Int { max(report.conflicts.count, report.jobs.map(\.conflicts).reduce(0, +)) }

    package func render(into html: inout Markup) {
        if titled { html.element("h2", text: report.file) }
        header(into: &html)
        problems(into: &html)
        timeline(into: &html)
        graph(into: &html)
        jobTable(into: &html)
        stepTable(into: &html)
        trends(into: &html)
        conflicts(into: &html)
    }

    // MARK: Header

    package func header(into html: inout Markup) {
        html.element("dl", ["class": "facts"]) { facts in
            let fact = { (name: String, value: String, facts: inout Markup) in
                facts.element("dt", text: name)
                facts.element("dd", text: value)
            }
            fact("file", report.file, &facts)
            fact("store", report.store, &facts)
            if let id = report.runID {
                fact("run", report.resumedFrom.map { "\(id), resumed from run \($0)" } ?? "\(id)", &facts)
            }
            facts.element("dt", text: "status")
            facts.element("dd") { HTMLReport.badge(report.status, into: &$0) }
            fact("started", ReportTheme.timestamp(report.startedAt), &facts)
            fact("elapsed", DurationFormat.compact.string(report.elapsedSeconds), &facts)
            facts.element("dt", text: "jobs")
            facts.element("dd", ["class": "counts"]) { counts in
                counts.element("span", text: "\(report.jobs.count) in all")
                for status in JobStatus.allCases {
                    let count = report.jobs.filter { $0.status == status }.count
                    guard count > 0 else { continue }
                    counts.element("span") { item in
                        Self.dot(ReportTheme.color(status), into: &item)
                        item.text("\(count) \(status.rawValue)")
                    }
                }
            }
            fact("conflicts", ReportPrinter.number(conflictCount), &facts)
        }
    }

    /// Jobs that did not succeed, with their error or why they were skipped.
    package func problems(into html: inout Markup) {
        let troubled = report.jobs.filter { $0.status != .ok }
        guard !troubled.isEmpty else { return }
        html.element(heading, text: "What went wrong")
        html.element("ul", ["class": "problems"]) { list in
            for job in troubled {
                list.element("li") { item in
                    item.element("strong", ["style": "color:\(ReportTheme.color(job.status))"], text: job.status.rawValue)
                    item.text(" ")
                    item.element("code", text: job.name)
                    if let error = job.error {
                        item.text(": ")
                        item.element("code", text: error)
                    } else if job.status == .skipped || !TimelineChart.started(job) {
                        item.text(": " + ReportPrinter.summary(job))
                    }
                }
            }
        }
    }

    // MARK: Charts

    package func timeline(into html: inout Markup) {
        let chart = TimelineChart(jobs: report.jobs, elapsed: report.elapsedSeconds)
        html.element(heading, text: "Timeline")
        html.element("p", ["class": "legend"]) { legend in
            for status in JobStatus.allCases where report.jobs.contains(where: { $0.status == status && TimelineChart.started($0) }) {
                legend.element("span") { item in
                    Self.dot(ReportTheme.color(status), into: &item)
                    item.text("ran, ended \(status.rawValue)")
                }
            }
            legend.element("span") { item in
                Self.dot(ReportTheme.queued, into: &item)
                item.text("queued (ready, waiting for a free slot)")
            }
        }
        html.element("div", ["class": "scroll"]) { chart.render(into: &$0) }
        if chart.startsEstimated {
            html.element("p", ["class": "muted"], text: "This report has no start times (written before started_s); "
                         + "starts are estimated from each job's needs and queued time.")
        }
    }

    package func graph(into html: inout Markup) {
        html.element(heading, text: "Job graph")
        html.element("div", ["class": "scroll"]) { JobGraphChart(jobs: report.jobs, idSuffix: String(number)).render(into: &$0) }
    }

    // MARK: Tables

    package func jobTable(into html: inout Markup) {
        let showsResumed = report.jobs.contains { $0.resumed != nil }
        html.element(heading, text: "Jobs")
        html.element("div", ["class": "scroll"]) { scroll in
            scroll.element("table", ["class": "jobs"]) { table in
                var columns = ["job", "status", "queued", "run", "fetched", "inserted", "updated", "deleted",
                               "rejected", "rows/s", "batches", "attempts", "conflicts"]
                if showsResumed { columns.append("resumed") }
                columns.append("needs")
                Self.headerRow(columns, numericFrom: 2, upTo: columns.count - (showsResumed ? 2 : 1), into: &table)
                for job in report.jobs {
                    let failed = job.status == .failed || job.status == .timedOut
                    table.element("tr", failed ? ["class": "failed"] : [:]) { row in
                        row.element("td", ["class": "name"], text: job.name)
                        row.element("td", ["class": "status"]) { cell in
                            Self.dot(ReportTheme.color(job.status), into: &cell)
                            cell.text(job.status.rawValue)
                        }
                        var numbers = [TimelineChart.started(job) ? DurationFormat.compact.string(job.queuedSeconds) : "–",
                                       TimelineChart.started(job) ? DurationFormat.compact.string(job.runSeconds) : "–"]
                        numbers += [job.rows.fetched, job.rows.inserted, job.rows.updated, job.rows.deleted, job.rows.rejected]
                            .map(ReportPrinter.number)
                        numbers.append(ReportTheme.rate(job))
                        numbers.append(Self.batches(job.batches))
                        numbers += [job.attempts, job.conflicts].map(ReportPrinter.number)
                        for number in numbers { row.element("td", ["class": "n"], text: number) }
                        if showsResumed { row.element("td", text: job.resumed ?? "") }
                        row.element("td", ["class": "name"], text: job.needs.joined(separator: ", "))
                    }
                }
            }
        }
    }

    package func stepTable(into html: inout Markup) {
        let steps = report.jobs.reduce(0) { $0 + $1.steps.count }
        guard steps > 0 else { return }
        html.element("details") { details in
            details.element("summary", text: "Steps (\(steps))")
            details.element("div", ["class": "scroll"]) { scroll in
                scroll.element("table", ["class": "steps"]) { table in
                    Self.headerRow(["job", "step", "kind", "entity", "run", "fetched", "inserted", "updated", "deleted",
                                    "rejected", "batches", "conflicts", "retries"], numericFrom: 4, into: &table)
                    for job in report.jobs {
                        for (index, step) in job.steps.enumerated() {
                            table.element("tr") { row in
                                row.element("td", ["class": "name"], text: job.name)
                                row.element("td", ["class": "n"], text: String(index + 1))
                                row.element("td", text: step.kind.rawValue)
                                row.element("td", ["class": "name"], text: step.entity)
                                row.element("td", ["class": "n"], text: DurationFormat.compact.string(step.runSeconds))
                                for number in [step.rows.fetched, step.rows.inserted, step.rows.updated, step.rows.deleted,
                                               step.rows.rejected] {
                                    row.element("td", ["class": "n"], text: ReportPrinter.number(number))
                                }
                                row.element("td", ["class": "n"], text: Self.batches(step.batches))
                                for number in [step.conflicts, step.retries] {
                                    row.element("td", ["class": "n"], text: ReportPrinter.number(number))
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Each job's run time over its last runs, with this run against the median of the others.
    package func trends(into html: inout Markup) {
        html.element(heading, text: "Run time over the last runs")
        guard let history = section.history, !history.runs.isEmpty else {
            html.element("p", ["class": "muted"], text: "No history yet: trends appear here once the store holds earlier runs of this file.")
            return
        }
        html.element("div", ["class": "scroll"]) { scroll in
            scroll.element("table", ["class": "trends"]) { table in
                Self.headerRow(["job", "last runs", "runs", "median before", "this run", "change"], numericFrom: 2, into: &table)
                for job in report.jobs {
                    let chart = TrendChart(job: job, history: history)
                    guard !chart.points.isEmpty else { continue }
                    let earlier = history.runs(of: job.name).suffix(TrendChart.runs - 1).map(\.seconds)
                    let median = Self.median(earlier)
                    table.element("tr") { row in
                        row.element("td", ["class": "name"], text: job.name)
                        row.element("td") { chart.render(into: &$0) }
                        row.element("td", ["class": "n"], text: String(chart.points.count))
                        row.element("td", ["class": "n"], text: median.map(DurationFormat.compact.string) ?? "–")
                        row.element("td", ["class": "n"], text: TimelineChart.started(job) ? DurationFormat.compact.string(job.runSeconds) : "–")
                        let change = Self.change(job, median: median)
                        row.element("td", ["class": "n" + (change.css.isEmpty ? "" : " " + change.css)], text: change.text)
                    }
                }
            }
        }
    }

    /// This run against the median: `+40%` (worse when over a quarter slower and over 50 ms
    /// longer), `-30%` (better), or `–` without both figures.
    package static func change(_ job: JobReport, median: Double?) -> (text: String, css: String) {
        guard let median, median > 0, TimelineChart.started(job) else { return ("–", "") }
        let ratio = job.runSeconds / median - 1
        let text = (ratio >= 0 ? "+" : "−") + String(format: "%.0f%%", abs(ratio) * 100)
        if ratio > 0.25 && job.runSeconds - median > 0.05 { return (text, "worse") }
        if ratio < -0.25 && median - job.runSeconds > 0.05 { return (text, "better") }
        return (text, "")
    }

    package static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    // MARK: Pieces

    /// Committed batches, and those rolled back when there are any: `12`, `11 + 1 rolled back`.
    package static func batches(_ batches: BatchCounts) -> String {
        ReportPrinter.number(batches.committed)
            + (batches.rolledBack > 0 ? " + \(ReportPrinter.number(batches.rolledBack)) rolled back" : "")
    }

    /// A row of column names; those from `numericFrom` up to `upTo` are right-aligned, as their numbers.
    package static func headerRow(_ names: [String], numericFrom: Int, upTo: Int = .max, into table: inout Markup) {
        table.element("tr") { row in
            for (index, name) in names.enumerated() {
                row.element("th", (numericFrom..<upTo).contains(index) ? ["class": "n"] : [:], text: name)
            }
        }
    }

    package static func dot(_ color: String, into markup: inout Markup) {
        markup.element("span", ["class": "dot", "style": "background:\(color)"], text: "")
    }
}
