import BatchRunKit

/// The job graph as an SVG drawing: one column per wave (jobs that can run together once
/// earlier waves are done), boxes coloured by status, an arrow from each need to the job
/// that needs it.
package struct JobGraphChart {
    package let jobs: [JobReport]
    /// Makes the arrow marker's id unique when a page holds several graphs.
    package let idSuffix: String

    package static let nodeWidth = 196.0
    package static let nodeHeight = 26.0
    package static let columnGap = 56.0
    package static let rowGap = 8.0
    package static let padding = 8.0
    package static let header = 20.0
    /// Top to bottom: the space between waves, and the wave labels' column.
    package static let waveGap = 34.0
    package static let labelWidth = 56.0

    /// Jobs by wave: a job with no needs in the report is in wave 0, any other one wave after
    /// its latest need. Within a wave, jobs are ordered by where their needs are (fewer
    /// crossing arrows), then as in the report.
    package static func waves(_ jobs: [JobReport]) -> [[JobReport]] {
        let byName = Dictionary(jobs.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var columns = JobGraph(jobs.map { ($0.name, $0.needs) }).waves().map { wave in wave.compactMap { byName[$0] } }
        var row: [String: Int] = [:]
        for (index, column) in columns.enumerated() {
            if index > 0 {
                columns[index] = column.enumerated().sorted { lhs, rhs in
                    let left = barycenter(lhs.element, row), right = barycenter(rhs.element, row)
                    return left != right ? left < right : lhs.offset < rhs.offset
                }.map(\.element)
            }
            for (place, job) in columns[index].enumerated() { row[job.name] = place }
        }
        return columns
    }

    private static func barycenter(_ job: JobReport, _ row: [String: Int]) -> Double {
        let places = job.needs.compactMap { row[$0] }
        return places.isEmpty ? 0 : Double(places.reduce(0, +)) / Double(places.count)
    }

    /// Where boxes go. Positions are in "wave space": `u` along the waves (left to right, or top
    /// to bottom), `v` across them; `point` turns them into SVG coordinates.
    package struct Layout {
        /// Waves side by side while they fit the page's width (`maxWidth`), else one below the
        /// other: a long chain of waves stays readable without scrolling sideways.
        package let sideways: Bool
        /// Jobs in each wave.
        package let counts: [Int]

        package static let maxWidth = 1200.0

        package init(waves: [[JobReport]]) {
            counts = waves.map(\.count)
            let tallest = Double(counts.max() ?? 0)
            let across = padding * 2 + Double(waves.count) * (nodeWidth + columnGap) - columnGap
            let down = labelWidth + padding * 2 + tallest * (nodeWidth + rowGap * 2)
            sideways = across <= Self.maxWidth || across <= down
        }

        /// The length of a box along the waves, and across them (with the gap between boxes).
        package var boxLength: Double { sideways ? nodeWidth : nodeHeight }
        package var boxBreadth: Double { sideways ? nodeHeight : nodeWidth }
        package var crossGap: Double { sideways ? rowGap : rowGap * 2 }

        package func waveStart(_ wave: Int) -> Double {
            padding + Double(wave) * (sideways ? nodeWidth + columnGap : nodeHeight + waveGap)
        }

        package func crossStart(_ place: Int) -> Double {
            (sideways ? padding + header : labelWidth + padding) + Double(place) * (boxBreadth + crossGap)
        }

        package var size: (width: Double, height: Double) {
            let along = waveStart(counts.count) - (sideways ? columnGap : waveGap) + padding
            let across = crossStart(counts.max() ?? 0) - crossGap + padding
            return sideways ? (along, across) : (across, along)
        }

        package func point(_ u: Double, _ v: Double) -> (x: Double, y: Double) {
            sideways ? (u, v) : (v, u)
        }

        /// The top-left corner of a box.
        package func origin(wave: Int, place: Int) -> (x: Double, y: Double) {
            point(waveStart(wave), crossStart(place))
        }

        /// An arrow from a box to one in a later wave. Across the waves in between it runs in
        /// the gap between boxes nearest its straight line, so it never passes under a box.
        package func arrow(from: (wave: Int, place: Int), to: (wave: Int, place: Int)) -> String {
            let f = TimelineChart.format
            let start = (u: waveStart(from.wave) + boxLength, v: crossStart(from.place) + boxBreadth / 2)
            let end = (u: waveStart(to.wave) - 1, v: crossStart(to.place) + boxBreadth / 2)
            var points = [start]
            for wave in (from.wave + 1)..<max(from.wave + 1, to.wave) {
                let share = Double(wave - from.wave) / Double(to.wave - from.wave)
                let straight = start.v + (end.v - start.v) * share
                let lanes = (0...counts[wave]).map { crossStart($0) - crossGap / 2 }
                let lane = lanes.min { abs($0 - straight) < abs($1 - straight) }!
                points += [(waveStart(wave), lane), (waveStart(wave) + boxLength, lane)]
            }
            points.append(end)
            let at = { (u: Double, v: Double) -> String in
                let p = point(u, v)
                return "\(f(p.x)),\(f(p.y))"
            }
            var path = "M" + at(start.u, start.v)
            for index in stride(from: 0, to: points.count - 1, by: 2) {
                let (a, b) = (points[index], points[index + 1])
                let bend = (b.u - a.u) / 2
                path += " C\(at(a.u + bend, a.v)) \(at(b.u - bend, b.v)) \(at(b.u, b.v))"
                if index + 2 < points.count - 1 { path += " L" + at(points[index + 2].u, points[index + 2].v) }
            }
            return path
        }
    }

    package func render(into markup: inout Markup) {
        let waves = Self.waves(jobs)
        let layout = Layout(waves: waves)
        var position: [String: (wave: Int, place: Int)] = [:]
        for (wave, members) in waves.enumerated() {
            for (place, job) in members.enumerated() { position[job.name] = (wave, place) }
        }
        let f = TimelineChart.format
        let (width, height) = layout.size
        let marker = "arrow-\(idSuffix)"
        markup.element("svg", ["width": f(width), "height": f(height), "viewBox": "0 0 \(f(width)) \(f(height))",
                               "role": "img", "aria-label": "Job graph: \(jobs.count) jobs in \(waves.count) waves"]) { svg in
            svg.element("defs") { defs in
                defs.element("marker", ["id": marker, "viewBox": "0 0 8 8", "refX": "8", "refY": "4",
                                        "markerWidth": "7", "markerHeight": "7", "orient": "auto"]) { arrow in
                    arrow.empty("path", ["d": "M0,0 L8,4 L0,8 z", "fill": "#8c959f"])
                }
            }
            for wave in waves.indices {
                let at = layout.sideways
                    ? (x: layout.waveStart(wave), y: Self.padding + 12)
                    : (x: Self.padding, y: layout.waveStart(wave) + 17)
                svg.element("text", ["class": "axis", "x": f(at.x), "y": f(at.y)], text: "wave \(wave + 1)")
            }
            for job in jobs {
                guard let to = position[job.name] else { continue }
                for need in job.needs {
                    guard let from = position[need] else { continue }
                    svg.empty("path", ["d": layout.arrow(from: from, to: to), "fill": "none", "stroke": "#8c959f",
                                       "stroke-width": "1.2", "marker-end": "url(#\(marker))"])
                }
            }
            for job in jobs {
                guard let place = position[job.name] else { continue }
                let at = layout.origin(wave: place.wave, place: place.place)
                let color = ReportTheme.color(job.status)
                svg.element("g") { node in
                    node.element("title", text: "\(job.name): \(job.status.rawValue), ran \(DurationFormat.compact.string(job.runSeconds))"
                                 + (job.needs.isEmpty ? "" : "; needs \(job.needs.joined(separator: ", "))"))
                    node.empty("rect", ["x": f(at.x), "y": f(at.y), "width": f(Self.nodeWidth), "height": f(Self.nodeHeight),
                                        "rx": "4", "fill": "#fff", "stroke": color, "stroke-width": "1.5"])
                    node.empty("rect", ["x": f(at.x), "y": f(at.y), "width": "6", "height": f(Self.nodeHeight),
                                        "rx": "2", "fill": color])
                    node.element("text", ["class": "label mono", "x": f(at.x + 12), "y": f(at.y + 17)],
                                 text: ReportTheme.shortened(job.name, to: 26))
                }
            }
        }
    }
}
