import BatchRunKit
import Foundation

/// The run's timeline as an SVG Gantt chart: one row per job on a shared time axis, a grey bar
/// for the time it waited for a free slot (queued) and a bar coloured by status for its run.
package struct TimelineChart {
    /// Where a job sits on the time axis, in seconds from the run's start.
    package struct Span {
        package var ready: Double
        package var start: Double
        package var end: Double
    }

    package let jobs: [JobReport]
    package let elapsed: Double

    package static let width = 960.0
    package static let labelWidth = 216.0
    package static let durationWidth = 64.0
    package static let top = 24.0
    package static let rowHeight = 20.0

    /// Each started job's span. Reports written before `started_s` existed have no start
    /// times; then starts are estimated from the needs (a job starts when its last need ended,
    /// plus its queued time) and `estimated` is true.
    package static func spans(_ jobs: [JobReport]) -> (spans: [String: Span], estimated: Bool) {
        var spans: [String: Span] = [:]
        var estimated = false
        let byName = Dictionary(jobs.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var visiting: Set<String> = []
        func end(of name: String) -> Double {
            if let span = spans[name] { return span.end }
            guard let job = byName[name], !visiting.contains(name) else { return 0 }
            visiting.insert(name)
            defer { visiting.remove(name) }
            let ready = job.needs.map(end(of:)).max() ?? 0
            return ready + job.queuedSeconds + job.runSeconds
        }
        for job in jobs where started(job) {
            if let start = job.startedSeconds {
                spans[job.name] = Span(ready: max(0, start - job.queuedSeconds), start: start, end: start + job.runSeconds)
            } else {
                estimated = true
                let ready = job.needs.map(end(of:)).max() ?? 0
                spans[job.name] = Span(ready: ready, start: ready + job.queuedSeconds,
                                       end: ready + job.queuedSeconds + job.runSeconds)
            }
        }
        return (spans, estimated)
    }

    /// Whether the job ran at all (a skipped job, or one cancelled before it started, did not).
    package static func started(_ job: JobReport) -> Bool {
        job.resumed == nil && (job.startedSeconds != nil || job.attempts > 0 || job.runSeconds > 0)
    }

    /// Whether start times had to be estimated (see `spans`).
    package var startsEstimated: Bool { Self.spans(jobs).estimated }

    package func render(into markup: inout Markup) {
        let spans = Self.spans(jobs).spans
        let total = max(elapsed, spans.values.map(\.end).max() ?? 0, 0.001)
        // Started jobs in the order they started, then those that never started.
        let rows = jobs.enumerated().sorted { lhs, rhs in
            let left = spans[lhs.element.name]?.start ?? .infinity
            let right = spans[rhs.element.name]?.start ?? .infinity
            return left != right ? left < right : lhs.offset < rhs.offset
        }.map(\.element)
        let chartWidth = Self.width - Self.labelWidth - Self.durationWidth
        let x = { (seconds: Double) in Self.labelWidth + seconds / total * chartWidth }
        let height = Self.top + Double(rows.count) * Self.rowHeight + 6
        let step = Self.tickStep(for: total)

        markup.element("svg", ["width": Self.format(Self.width), "height": Self.format(height),
                               "viewBox": "0 0 \(Self.format(Self.width)) \(Self.format(height))",
                               "role": "img", "aria-label": "Timeline of \(jobs.count) jobs over \(DurationFormat.compact.string(total))"]) { svg in
            for (index, _) in rows.enumerated() where index % 2 == 1 {
                svg.empty("rect", ["x": "0", "y": Self.format(Self.top + Double(index) * Self.rowHeight),
                                   "width": Self.format(Self.width), "height": Self.format(Self.rowHeight), "fill": "#f6f8fa"])
            }
            var tick = 0.0
            while tick <= total + step * 0.001 {
                let position = Self.format(x(tick))
                svg.empty("line", ["x1": position, "x2": position, "y1": Self.format(Self.top - 4),
                                   "y2": Self.format(height - 6), "stroke": "#d8dee4", "stroke-width": "1"])
                svg.element("text", ["class": "axis", "x": position, "y": Self.format(Self.top - 8),
                                     "text-anchor": "middle"], text: Self.tickLabel(tick, step: step))
                tick += step
            }
            let end = Self.format(x(elapsed))
            svg.empty("line", ["x1": end, "x2": end, "y1": Self.format(Self.top - 4), "y2": Self.format(height - 6),
                               "stroke": "#57606a", "stroke-width": "1", "stroke-dasharray": "3 3"])
            svg.element("text", ["class": "axis", "x": Self.format(Self.width - 4), "y": Self.format(Self.top - 8),
                                 "text-anchor": "end"], text: "run \(DurationFormat.compact.string(elapsed))")
            for (index, job) in rows.enumerated() {
                let y = Self.top + Double(index) * Self.rowHeight
                svg.element("g") { row in
                    row.element("title", text: Self.tooltip(job, spans[job.name]))
                    row.element("text", ["class": "label mono", "x": "4", "y": Self.format(y + 14)],
                                text: ReportTheme.shortened(job.name, to: 29))
                    guard let span = spans[job.name] else {
                        row.element("text", ["class": "note", "x": Self.format(Self.labelWidth + 4), "y": Self.format(y + 14)],
                                    text: Self.notStarted(job))
                        return
                    }
                    if x(span.start) - x(span.ready) >= 1 {
                        row.empty("rect", ["x": Self.format(x(span.ready)), "y": Self.format(y + 7),
                                           "width": Self.format(x(span.start) - x(span.ready)), "height": "6",
                                           "fill": ReportTheme.queued])
                    }
                    row.empty("rect", ["x": Self.format(x(span.start)), "y": Self.format(y + 4),
                                       "width": Self.format(max(2, x(span.end) - x(span.start))), "height": "12", "rx": "2",
                                       "fill": ReportTheme.color(job.status)])
                    row.element("text", ["class": "label", "x": Self.format(Self.width - 4), "y": Self.format(y + 14),
                                         "text-anchor": "end"], text: DurationFormat.compact.string(job.runSeconds))
                }
            }
        }
    }

    package static func tooltip(_ job: JobReport, _ span: Span?) -> String {
        var text = "\(job.name): \(job.status.rawValue)"
        if let span {
            text += ", started at \(DurationFormat.compact.string(span.start)), ran \(DurationFormat.compact.string(job.runSeconds))"
            if job.queuedSeconds > 0 { text += ", queued \(DurationFormat.compact.string(job.queuedSeconds))" }
        } else {
            text = "\(job.name): \(notStarted(job))"
        }
        return text
    }

    /// Why a job has no bar: `skipped: needs load failed`, `cancelled before it started`,
    /// `done earlier` (a resumed run's job that was not run again).
    package static func notStarted(_ job: JobReport) -> String {
        if let resumed = job.resumed { return resumed }
        return job.status == .skipped ? "skipped: " + ReportPrinter.summary(job) : ReportPrinter.summary(job)
    }

    /// A round step giving about eight ticks: 1, 2 or 5 times a power of ten seconds, or
    /// whole minutes and hours.
    package static func tickStep(for total: Double) -> Double {
        let raw = total / 8
        if raw > 20 {
            let steps: [Double] = [30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400]
            return steps.first { $0 >= raw } ?? 86400 * (raw / 86400).rounded(.up)
        }
        let magnitude = pow(10, (log10(raw)).rounded(.down))
        return [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude
    }

    package static func tickLabel(_ value: Double, step: Double) -> String {
        if step < 60 {
            let decimals = step >= 1 ? 0 : Int((-log10(step)).rounded(.up))
            return String(format: "%.\(decimals)fs", value)
        }
        let minutes = Int(value.rounded()) / 60
        if minutes < 60 { return "\(minutes)m" }
        return minutes % 60 == 0 ? "\(minutes / 60)h" : "\(minutes / 60)h\(minutes % 60)m"
    }

    /// A coordinate with at most one decimal, to keep the file small.
    package static func format(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
