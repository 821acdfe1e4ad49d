import BatchRunKit

/// The job graph as an SVG drawing: one column per wave (jobs that can run together once
/// earlier waves are done), boxes coloured by status, an arrow from each need to the job
/// that needs it.
struct JobGraphChart {
    let jobs: [JobReport]
    /// Makes the arrow marker's id unique when a page holds several graphs.
    let idSuffix: String

    static let nodeWidth = 196.0
    static let nodeHeight = 26.0
    static let columnGap = 56.0
    static let rowGap = 8.0
    static let padding = 8.0
    static let header = 20.0
    /// Top to bottom: the space between waves, and the wave labels' column.
    static let waveGap = 34.0
    static let labelWidth = 56.0

    /// Jobs by wave: a job with no needs in the report is in wave 0, any other one wave after
    /// its latest need. Within a wave, jobs are ordered by where their needs are (fewer
    /// crossing arrows), then as in the report.
    static func waves(_ jobs: [JobReport]) -> [[JobReport]] {
        let position = Dictionary(jobs.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        var wave: [String: Int] = [:]
        var visiting: Set<String> = []
        func waveOf(_ job: JobReport) -> Int {
            if let known = wave[job.name] { return known }
            guard !visiting.contains(job.name) else { return 0 }
            visiting.insert(job.name)
            let needs = job.needs.compactMap { position[$0].map { jobs[$0] } }
            let result = needs.isEmpty ? 0 : 1 + needs.map(waveOf).max()!
            visiting.remove(job.name)
            wave[job.name] = result
            return result
        }
        var columns: [[JobReport]] = []
        for job in jobs {
            let index = waveOf(job)
            while columns.count <= index { columns.append([]) }
            columns[index].append(job)
        }
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

    /// Waves side by side (left to right) while they fit the page's width, else one below the
    /// other (top to bottom): a long chain of waves stays readable without scrolling sideways.
    static let maxWidth = 1200.0

    func render(into markup: inout Markup) {
        let columns = Self.waves(jobs)
        let tallest = columns.map(\.count).max() ?? 0
        let across = Self.padding * 2 + Double(columns.count) * (Self.nodeWidth + Self.columnGap) - Self.columnGap
        let downWidth = Self.labelWidth + Self.padding * 2 + Double(tallest) * (Self.nodeWidth + Self.rowGap * 2)
        let sideways = across <= Self.maxWidth || across <= downWidth
        var origin: [String: (x: Double, y: Double)] = [:]
        for (index, column) in columns.enumerated() {
            for (place, job) in column.enumerated() {
                origin[job.name] = sideways
                    ? (Self.padding + Double(index) * (Self.nodeWidth + Self.columnGap),
                       Self.padding + Self.header + Double(place) * (Self.nodeHeight + Self.rowGap))
                    : (Self.labelWidth + Self.padding + Double(place) * (Self.nodeWidth + Self.rowGap * 2),
                       Self.padding + Double(index) * (Self.nodeHeight + Self.waveGap))
            }
        }
        let width = sideways ? across : downWidth
        let height = sideways
            ? Self.padding * 2 + Self.header + Double(tallest) * (Self.nodeHeight + Self.rowGap)
            : Self.padding * 2 + Double(columns.count) * (Self.nodeHeight + Self.waveGap) - Self.waveGap
        let f = TimelineChart.format
        let marker = "arrow-\(idSuffix)"
        markup.element("svg", ["width": f(width), "height": f(height), "viewBox": "0 0 \(f(width)) \(f(height))",
                               "role": "img", "aria-label": "Job graph: \(jobs.count) jobs in \(columns.count) waves"]) { svg in
            svg.element("defs") { defs in
                defs.element("marker", ["id": marker, "viewBox": "0 0 8 8", "refX": "8", "refY": "4",
                                        "markerWidth": "7", "markerHeight": "7", "orient": "auto"]) { arrow in
                    arrow.empty("path", ["d": "M0,0 L8,4 L0,8 z", "fill": "#8c959f"])
                }
            }
            for index in columns.indices {
                let at = sideways
                    ? (x: Self.padding + Double(index) * (Self.nodeWidth + Self.columnGap), y: Self.padding + 12)
                    : (x: Self.padding, y: Self.padding + Double(index) * (Self.nodeHeight + Self.waveGap) + 17)
                svg.element("text", ["class": "axis", "x": f(at.x), "y": f(at.y)], text: "wave \(index + 1)")
            }
            for job in jobs {
                guard let to = origin[job.name] else { continue }
                for need in job.needs {
                    guard let from = origin[need] else { continue }
                    svg.empty("path", ["d": Self.arrow(from: from, to: to, sideways: sideways),
                                       "fill": "none", "stroke": "#8c959f", "stroke-width": "1.2",
                                       "marker-end": "url(#\(marker))"])
                }
            }
            for job in jobs {
                guard let at = origin[job.name] else { continue }
                let color = ReportTheme.color(job.status)
                svg.element("g") { node in
                    node.element("title", text: "\(job.name): \(job.status.rawValue), ran \(ReportTheme.duration(job.runSeconds))"
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

    /// A curve from the need's box to the needing one's: right side to left side when waves go
    /// left to right, bottom to top when they go down.
    static func arrow(from: (x: Double, y: Double), to: (x: Double, y: Double), sideways: Bool) -> String {
        let f = TimelineChart.format
        if sideways {
            let x1 = from.x + nodeWidth, y1 = from.y + nodeHeight / 2, x2 = to.x - 1, y2 = to.y + nodeHeight / 2
            let bend = max(columnGap / 2, (x2 - x1) / 3)
            return "M\(f(x1)),\(f(y1)) C\(f(x1 + bend)),\(f(y1)) \(f(x2 - bend)),\(f(y2)) \(f(x2)),\(f(y2))"
        }
        let x1 = from.x + nodeWidth / 2, y1 = from.y + nodeHeight, x2 = to.x + nodeWidth / 2, y2 = to.y - 1
        let bend = max(waveGap / 2, (y2 - y1) / 3)
        return "M\(f(x1)),\(f(y1)) C\(f(x1)),\(f(y1 + bend)) \(f(x2)),\(f(y2 - bend)) \(f(x2)),\(f(y2))"
    }
}
