@testable import BatchRunRender
import BatchRunKit
import Foundation
import Testing
import TestSupport

/// The HTML report's renderer on reports and histories built here: trends, escaping, the
/// time axis, the waves of the job graph.
@Suite("HTML report rendering")
struct HTMLRenderingTests {
    static let start = Date(timeIntervalSince1970: 1_790_000_000)

    /// A three-job run: load, then check (which needs load), and a skipped report.
    static func report(loadSeconds: Double = 2.0) -> RunReport {
        RunReport(file: "jobs/nightly.yaml", store: "var/nightly.sqlite", status: .failed, startedAt: start, elapsedSeconds: 3.5, jobs: [
            JobReport(name: "load", status: .ok, runSeconds: loadSeconds, attempts: 1,
                      rows: RowCounts(inserted: 1000), batches: BatchCounts(committed: 2), startedSeconds: 0.1),
            JobReport(name: "check", status: .failed, needs: ["load"], queuedSeconds: 0.5, runSeconds: 0.8, attempts: 1,
                      error: "boom", startedSeconds: 2.6),
            JobReport(name: "publish", status: .skipped, needs: ["check"], skippedBecause: "check failed"),
        ])
    }

    static func history(_ seconds: [Double], status: RunReport.Status = .ok) -> RunHistory {
        RunHistory(runs: seconds.enumerated().map { index, value in
            RunHistory.Run(id: Int64(index + 1), startedAt: start.addingTimeInterval(Double(index - seconds.count) * 86_400),
                           status: index == 1 ? .failed : status, jobSeconds: ["load": value, "check": 0.8])
        })
    }

    @Test("without history the trends say so; with history each job gets a sparkline through its runs and this one")
    func trends() throws {
        let bare = try HTMLDocument(HTMLReport(sections: [.init(report: Self.report())]).render())
        #expect(bare.root.text.contains("No history yet"))
        #expect(bare.elements(class: "trend").isEmpty)

        let history = Self.history([1.0, 1.2, 0.9, 1.1])
        let page = try HTMLDocument(HTMLReport(sections: [.init(report: Self.report(), history: history)]).render())
        #expect(!page.root.text.contains("No history yet"))
        let rows = try #require(page.elements(class: "trends").first).elements("tr").dropFirst()
        // The skipped job never ran and has no history: no trend row.
        #expect(rows.map { $0.elements("td")[0].text } == ["load", "check"])
        let load = rows.first!
        let sparkline = try #require(load.elements(class: "trend").first)
        let points = try #require(sparkline.elements("polyline").first?.attributes["points"]).split(separator: " ")
        #expect(points.count == 5)   // four earlier runs and this one
        // This run (2.0s, the slowest) is the top of the chart; the 0.9s run the lowest point.
        let ys = points.map { Double($0.split(separator: ",")[1])! }
        #expect(ys.last == ys.min() && ys[2] == ys.max())
        // The failed earlier run and this run are drawn as dots in their colours.
        let dots = sparkline.elements("circle").map { $0.attributes["fill"]! }
        #expect(dots == [ReportTheme.color(RunReport.Status.failed), ReportTheme.color(JobStatus.ok)])
        #expect(sparkline.elements("title").first?.text.split(separator: "\n")[1].hasPrefix("#2 ") == true)
        let cells = load.elements("td").map(\.text)
        #expect(cells[2...] == ["5", "1.05s", "2.00s", "+90%"])
        #expect(load.elements("td").last?.attributes["class"] == "n worse")
        #expect(rows.last!.elements("td").last?.text == "+0%")
    }

    @Test("the jobs table has a resumed column only when a job has `resumed`")
    func resumedColumn() throws {
        let headers = { (report: RunReport) in
            try HTMLDocument(HTMLReport(sections: [.init(report: report)]).render())
                .elements(class: "jobs").first?.elements("th").map(\.text) ?? []
        }
        var report = Self.report()
        #expect(try !headers(report).contains("resumed"))
        report.jobs[0].resumed = "done earlier"
        #expect(try headers(report).contains("resumed"))
        let page = try HTMLDocument(HTMLReport(sections: [.init(report: report)]).render())
        let row = try #require(page.elements(class: "jobs").first?.elements("tr")[1].elements("td").map(\.text))
        #expect(row[try headers(report).firstIndex(of: "resumed")!] == "done earlier")
        // A job done earlier has no bar in the timeline, and says so.
        report.jobs[0].startedSeconds = nil
        report.jobs[0].runSeconds = 0
        report.jobs[0].attempts = 0
        let timeline = try HTMLDocument(HTMLReport(sections: [.init(report: report)]).render()).elements("svg")[0]
        let load = try #require(timeline.elements("g").first { $0.elements("title").first?.text.hasPrefix("load:") == true })
        #expect(load.elements("rect").isEmpty && load.elements("text").last?.text == "done earlier")
    }

    @Test("a sparkline shows the last runs only")
    func trendLength() {
        let chart = TrendChart(job: Self.report().jobs[0], history: Self.history(Array(repeating: 1, count: 40)))
        #expect(chart.points.count == TrendChart.runs)
        #expect(chart.points.last?.label.hasPrefix("this run 2.00s ok") == true)
    }

    @Test("values are escaped, control characters replaced")
    func escaping() throws {
        #expect(Markup.escape("<script>alert('x') & \"y\"</script>") == "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;")
        #expect(Markup.escape("a\u{1}b\tc") == "a\u{FFFD}b\tc")
        var report = Self.report()
        report.jobs[1].error = "bad value \"<img src=x onerror=alert(1)>\" \u{0}"
        let html = HTMLReport(sections: [.init(report: report)]).render()
        let page = try HTMLDocument(html)
        #expect(page.elements("img").isEmpty)
        #expect(page.root.text.contains("bad value \"<img src=x onerror=alert(1)>\" \u{FFFD}"))
    }

    @Test("the time axis has round steps; starts missing from old reports are estimated from needs")
    func timeAxis() {
        #expect(TimelineChart.tickStep(for: 0.09) == 0.02)
        #expect(TimelineChart.tickStep(for: 8) == 1)
        #expect(TimelineChart.tickStep(for: 100) == 20)
        #expect(TimelineChart.tickStep(for: 1000) == 300)
        #expect(TimelineChart.tickLabel(0.04, step: 0.02) == "0.04s")
        #expect(TimelineChart.tickLabel(5400, step: 1800) == "1h30m")
        var report = Self.report()
        #expect(!TimelineChart.spans(report.jobs).estimated)
        for index in report.jobs.indices { report.jobs[index].startedSeconds = nil }
        let (spans, estimated) = TimelineChart.spans(report.jobs)
        #expect(estimated)
        #expect(spans["load"]?.start == 0 && spans["check"]?.ready == 2.0 && spans["check"]?.start == 2.5)
        #expect(spans["publish"] == nil)
    }

    @Test("the job graph puts each job one wave after its latest need")
    func waves() {
        let jobs = [
            JobReport(name: "a", status: .ok), JobReport(name: "b", status: .ok),
            JobReport(name: "c", status: .ok, needs: ["b"]), JobReport(name: "d", status: .ok, needs: ["a", "c"]),
            JobReport(name: "e", status: .ok, needs: ["a", "outside"]),
        ]
        #expect(JobGraphChart.waves(jobs).map { $0.map(\.name) } == [["a", "b"], ["e", "c"], ["d"]])
    }

    @Test("an arrow that skips a wave runs in a gap between that wave's boxes, not under one")
    func arrowRouting() throws {
        let jobs = [
            JobReport(name: "load", status: .ok), JobReport(name: "quick", status: .ok),
            JobReport(name: "after", status: .ok, needs: ["load"]),
            JobReport(name: "report", status: .ok, needs: ["after", "quick"]),
        ]
        let waves = JobGraphChart.waves(jobs)
        #expect(waves.map { $0.map(\.name) } == [["load", "quick"], ["after"], ["report"]])
        let layout = JobGraphChart.Layout(waves: waves)
        #expect(layout.sideways)
        // quick (wave 0, place 1) to report (wave 2): across wave 1 the path is a straight line
        // ("L") at one height, outside the box of `after` (wave 1, place 0).
        let path = layout.arrow(from: (0, 1), to: (2, 0))
        let lane = try #require(path.split(separator: " ").first { $0.hasPrefix("L") })
        let y = try #require(Double(lane.split(separator: ",")[1]))
        let box = layout.origin(wave: 1, place: 0).y
        #expect(y > box + JobGraphChart.nodeHeight || y < box, "\(path)")
        // A long chain lays the waves out top to bottom instead.
        let chain = (0..<12).map { JobReport(name: "j\($0)", status: .ok, needs: $0 == 0 ? [] : ["j\($0 - 1)"]) }
        #expect(!JobGraphChart.Layout(waves: JobGraphChart.waves(chain)).sideways)
    }

    @Test("several job files: one page, one section each, with a table of contents")
    func sections() throws {
        var second = Self.report()
        second.file = "jobs/second.yaml"
        second.status = .ok
        let page = try HTMLDocument(HTMLReport(sections: [.init(report: Self.report()), .init(report: second)]).render())
        #expect(page.elements("section").map { $0.attributes["id"] } == ["file-1", "file-2"])
        #expect(page.elements("nav").first?.elements("a").map { $0.attributes["href"] } == ["#file-1", "#file-2"])
        // Each graph has its own arrow marker.
        #expect(page.elements("marker").map { $0.attributes["id"] } == ["arrow-1", "arrow-2"])
    }

    @Test("a 50-job report with 19 earlier runs and 5,000 conflicts stays under 300 KB; it lists the first 100 conflicts")
    func size() throws {
        var jobs: [JobReport] = []
        for index in 0..<50 {
            let name = "import_regional_sales_partition_\(index)"
            jobs.append(JobReport(name: name, status: index == 7 ? .failed : .ok, needs: index >= 5 ? ["import_regional_sales_partition_\(index - 5)"] : [],
                                  queuedSeconds: 0.3, runSeconds: 1 + Double(index % 7), attempts: 1,
                                  error: index == 7 ? String(repeating: "a long error message ", count: 20) : nil,
                                  rows: RowCounts(inserted: 120_000, updated: 3_000), batches: BatchCounts(committed: 120),
                                  steps: [StepReport(kind: .insert, entity: "Sale", runSeconds: 1, rows: RowCounts(inserted: 120_000)),
                                          StepReport(kind: .batchUpdate, entity: "Sale", runSeconds: 0.5, rows: RowCounts(updated: 3_000))],
                                  conflicts: 100, startedSeconds: Double(index / 5) * 8))
        }
        let conflicts = (0..<5_000).map { index in
            MergeConflictRecord(job: jobs[index % 50].name, entity: "Sale", key: ["id": .integer(Int64(index))], kind: .constraint,
                                policy: .objectTrump, outcome: .keptOurs, changedBy: "outside this run", properties: [
                                    .init(name: "region", original: .null, store: .text("north-east"), ours: .text("north-west"), resolved: .text("north-west")),
                                    .init(name: "amount", original: .null, store: .real(12.5), ours: .real(13.25), resolved: .real(13.25)),
                                ])
        }
        let report = RunReport(file: "jobs/sales.yaml", store: "var/sales.sqlite", status: .failed, startedAt: Self.start,
                               elapsedSeconds: 90, jobs: jobs, conflicts: conflicts)
        let history = RunHistory(runs: (0..<19).map { run in
            RunHistory.Run(id: Int64(run), startedAt: Self.start.addingTimeInterval(Double(run - 19) * 86_400), status: .ok,
                           jobSeconds: Dictionary(uniqueKeysWithValues: jobs.map { ($0.name, Double(run % 5) + 1) }))
        })
        let html = HTMLReport(sections: [.init(report: report, history: history)]).render()
        #expect(html.utf8.count < 300_000, "\(html.utf8.count) bytes")
        let page = try HTMLDocument(html)
        #expect(page.elements(class: "trend").count == 50)
        #expect(page.elements(class: "conflicts").first?.elements("tr").count == 1 + 100 * 2)
        #expect(page.root.text.contains("The first 100 of 5,000 conflicts; the other 4,900 are in the JSON report."))
    }

    @Test("timestamps as a DateFormatter in UTC writes them, without one")
    func timestamps() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        for seconds in [0, 1_764_165_787.9, 951_782_400, 4_102_444_799, 1_735_689_599.999] {
            let date = Date(timeIntervalSince1970: seconds)
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
            #expect(ReportTheme.timestamp(date) == formatter.string(from: date))
            formatter.dateFormat = "yyyy-MM-dd HH:mm"
            #expect(ReportTheme.timestamp(date, seconds: false) == formatter.string(from: date))
        }
    }
}
