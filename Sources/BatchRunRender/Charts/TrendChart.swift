import BatchRunKit
import Foundation

/// A job's run time over its last runs as a sparkline: a line through the runs, oldest on the
/// left, this run as the last, larger dot; runs that did not end `ok` are drawn in their colour.
/// Its tooltip lists the runs: `#41 2026-11-21 02:00 1.90s ok`, ..., `this run 2.40s failed`.
package struct TrendChart {
    package struct Point {
        package var seconds: Double
        package var color: String
        package var label: String
    }

    /// Oldest first; the last one is this run.
    package let points: [Point]

    package static let width = 150.0
    package static let height = 30.0
    package static let inset = 4.0
    /// How many runs a sparkline shows at most (this one included).
    package static let runs = 20

    /// The job's points: up to `runs - 1` earlier runs from `history`, then this run's (when
    /// the job ran in it).
    package init(job: JobReport, history: RunHistory) {
        var points = history.runs(of: job.name).suffix(Self.runs - 1).map { run, seconds in
            Point(seconds: seconds, color: ReportTheme.color(run.status),
                  label: "#\(run.id) \(ReportTheme.timestamp(run.startedAt, seconds: false)) \(DurationFormat.compact.string(seconds)) \(run.status.rawValue)")
        }
        if TimelineChart.started(job) {
            points.append(Point(seconds: job.runSeconds, color: ReportTheme.color(job.status),
                                label: "this run \(DurationFormat.compact.string(job.runSeconds)) \(job.status.rawValue)"))
        }
        self.points = points
    }

    package func render(into markup: inout Markup) {
        let f = TimelineChart.format
        let top = max(points.map(\.seconds).max() ?? 0, 0.001)
        let step = points.count > 1 ? (Self.width - 2 * Self.inset) / Double(points.count - 1) : 0
        let coordinates = points.enumerated().map { index, point in
            (x: Self.inset + Double(index) * step, y: Self.height - Self.inset - point.seconds / top * (Self.height - 2 * Self.inset))
        }
        markup.element("svg", ["class": "trend", "width": f(Self.width), "height": f(Self.height),
                               "viewBox": "0 0 \(f(Self.width)) \(f(Self.height))", "role": "img",
                               "aria-label": "run time over the last \(points.count) runs"]) { svg in
            svg.element("title", text: points.map(\.label).joined(separator: "\n"))
            svg.empty("line", ["x1": "0", "x2": f(Self.width), "y1": f(Self.height - Self.inset + 1),
                               "y2": f(Self.height - Self.inset + 1), "stroke": "#eaeef2"])
            if coordinates.count > 1 {
                svg.empty("polyline", ["points": coordinates.map { "\(f($0.x)),\(f($0.y))" }.joined(separator: " "),
                                       "fill": "none", "stroke": "#57606a", "stroke-width": "1.3",
                                       "stroke-linejoin": "round"])
            }
            for (index, (point, at)) in zip(points, coordinates).enumerated() {
                let last = index == points.count - 1
                guard last || point.color != ReportTheme.color(JobStatus.ok) else { continue }
                svg.empty("circle", ["cx": f(at.x), "cy": f(at.y), "r": last ? "3.2" : "2.2", "fill": point.color])
            }
        }
    }
}
