import Foundation
import GRDB
import Testing
import TestSupport

/// `run --html` and `batchrun report --html` with the built binary, on runs that succeed,
/// fail, are cancelled and are resumed; the page is parsed as XML and checked for its structure, every
/// job, escaping and self-containment.
@Suite("HTML reports")
struct HTMLReportTests {
    static let hostile = "<script>alert('x')</script><a href=\"https://evil.example/\">y</a>"

    /// Checks what every report page must be and returns it parsed: well-formed, no script,
    /// nothing loaded from elsewhere, each job in the timeline, the graph and the jobs table.
    @discardableResult
    /// Where two pages differ first (a few tags of each, from there), nil when they are the
    /// same: a failure then says what differs.
    static func difference(between first: String, and second: String) throws -> String? {
        let (a, b) = (try String(contentsOfFile: first, encoding: .utf8), try String(contentsOfFile: second, encoding: .utf8))
        guard a != b else { return nil }
        let (tagsA, tagsB) = (a.components(separatedBy: "><"), b.components(separatedBy: "><"))
        let common = min(tagsA.count, tagsB.count)
        let index = (0..<common).first { tagsA[$0] != tagsB[$0] } ?? common
        return "tag \(index): \(tagsA[index...].prefix(4).joined(separator: "><")) | \(tagsB[index...].prefix(4).joined(separator: "><"))"
    }

    func checkPage(_ path: String, jobs: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> HTMLDocument {
        let html = try String(contentsOfFile: path, encoding: .utf8)
        let page = try HTMLDocument(html)
        #expect(page.root.name == "html", sourceLocation: sourceLocation)
        #expect(!html.lowercased().contains("<script"), sourceLocation: sourceLocation)
        for element in page.root.all {
            for name in ["src", "href", "xlink:href", "action"] {
                let value = (element.attributes[name] ?? "").lowercased()
                #expect(!value.hasPrefix("http:") && !value.hasPrefix("https:") && !value.hasPrefix("//"),
                        "\(element.name) \(name)=\(value)", sourceLocation: sourceLocation)
            }
        }
        #expect(!html.contains("url(http") && !html.contains("@import"), sourceLocation: sourceLocation)
        let svgs = page.elements("svg")
        let timeline = try #require(svgs.first { $0.attributes["aria-label"]?.hasPrefix("Timeline") == true })
        let graph = try #require(svgs.first { $0.attributes["aria-label"]?.hasPrefix("Job graph") == true })
        let table = try #require(page.elements(class: "jobs").first)
        let rows = table.elements("tr").dropFirst().map { $0.elements("td")[0].text }
        #expect(rows == jobs, sourceLocation: sourceLocation)
        for job in jobs {
            #expect(timeline.elements("g").contains { $0.elements("title").first?.text.hasPrefix("\(job):") == true },
                    "\(job) not in the timeline", sourceLocation: sourceLocation)
            #expect(graph.elements("g").contains { $0.elements("title").first?.text.hasPrefix("\(job):") == true },
                    "\(job) not in the graph", sourceLocation: sourceLocation)
        }
        return page
    }

    /// A job's row in the jobs table, column name to cell text.
    func row(of job: String, in page: HTMLDocument) -> [String: String] {
        guard let table = page.elements(class: "jobs").first,
              let row = table.elements("tr").first(where: { $0.elements("td").first?.text == job }) else { return [:] }
        return Dictionary(zip(table.elements("th").map(\.text), row.elements("td").map(\.text)), uniquingKeysWith: { $1 })
    }

    func status(of job: String, in page: HTMLDocument) -> String? {
        row(of: job, in: page)["status"]
    }

    @Test("a run that succeeds: header, timeline bars, graph, conflicts with a hostile value shown as text; report re-renders it")
    func succeeded() throws {
        let folder = try TemporaryFolder()
        let queue = try DatabaseQueue(path: folder.path("store.sqlite"))
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE Session (id INTEGER PRIMARY KEY, user TEXT NOT NULL, minutes REAL)")
            try db.execute(sql: "INSERT INTO Session VALUES (1, 'ann', 10)")
        }
        let hostile = Self.hostile.replacingOccurrences(of: "'", with: "''")
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              Session:
                columns: { id: integer primary key, user: text not null, minutes: real }
            jobs:
              load_a_rather_long_job_name_for_the_timeline:
                merge_policy: object-trump
                steps:
                  - insert: { entity: Session, rows: [{ id: 1, user: '\(hostile)', minutes: 11 }, { id: 2, user: bob, minutes: 7 }] }
              count:
                needs: load_a_rather_long_job_name_for_the_timeline
                steps:
                  - fetch: { entity: Session, select: { n: "count(*)" } }
              other:
                steps:
                  - fetch: { entity: Session }
            """)
        let result = try Batchrun.run(["job.yaml", "--report", "r.json", "--html", "out/r.html"], in: folder.url)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let jobs = ["load_a_rather_long_job_name_for_the_timeline", "count", "other"]
        let page = try checkPage(folder.path("out/r.html"), jobs: jobs)
        #expect(page.elements("title").first?.text == "batchrun: job.yaml")
        let facts = try #require(page.elements(class: "facts").first)
        #expect(facts.elements("dt").map(\.text) == ["file", "store", "run", "status", "started", "elapsed", "jobs", "conflicts"])
        #expect(facts.elements(class: "badge").first?.text == "ok")
        #expect(facts.elements("dd").last?.text == "1")
        #expect(jobs.allSatisfy { status(of: $0, in: page) == "ok" })
        #expect(page.elements("h2").map(\.text).contains("What went wrong") == false)
        // Every job ran: a run bar each; the long name is shortened in the chart, whole in the table.
        let timeline = page.elements("svg")[0]
        #expect(timeline.elements("g").count == 3 && timeline.elements("g").allSatisfy { !$0.elements("rect").isEmpty })
        #expect(timeline.elements("text").contains { $0.text == "load_a_rather_…r_the_timeline" })
        #expect(page.elements("marker").count == 1 && page.elements("svg")[1].elements("path").count == 2)   // marker + one arrow
        // The conflicts counted per job, entity, kind and outcome.
        let counts = try #require(page.elements(class: "conflict-counts").first)
        #expect(counts.elements("tr").dropFirst().map { $0.elements("td").map(\.text) }
            == [[jobs[0], "Session", "constraint", "kept_ours", "1"]])
        // The conflict, with the hostile value as text and nothing of it as markup.
        let conflicts = try #require(page.elements(class: "conflicts").first)
        let cells = conflicts.elements("tr")[1].elements("td").map(\.text)
        #expect(cells[0] == jobs[0] && cells[2] == "id=1" && cells[5] == "kept_ours")
        #expect(conflicts.elements("td").contains { $0.text == "'\(Self.hostile)'" })
        // One row per property; the second, minutes: original, store, ours, resolved (whole reals as in JSON).
        #expect(conflicts.elements("tr")[2].elements("td").map(\.text) == ["minutes", "NULL", "10", "11", "11"])
        #expect(page.elements("a").allSatisfy { $0.attributes["href"]?.hasPrefix("#") == true })
        #expect(page.root.text.contains("No history yet"))

        // `batchrun report` renders the saved JSON report into the same page.
        let again = try Batchrun.run(["report", "r.json", "--html", "again.html"], in: folder.url)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try Self.difference(between: folder.path("again.html"), and: folder.path("out/r.html")) == nil)
        // The JSON report carries each job's start, after its need's end.
        let reported = try folder.json("r.json")["jobs"] as! [[String: Any]]
        let load = reported[0], count = reported[1]
        let started = try #require(count["started_s"] as? Double)
        #expect(started >= (load["started_s"] as! Double) + (load["run_s"] as! Double))
    }

    @Test("the README's commands on jobs/nightly.yaml: run --html, then report from the saved JSON, give the same page")
    func nightly() throws {
        let folder = try TemporaryFolder()
        try folder.copyFromPackage("jobs")
        try folder.copyFromPackage("examples")
        let run = try Batchrun.run(["jobs/nightly.yaml", "--report", "var/nightly.json", "--html", "var/nightly.html"], in: folder.url)
        #expect(run.status == 0, "\(run.stderr)")
        let page = try checkPage(folder.path("var/nightly.html"), jobs: ["import_sessions", "close_stale", "purge_old", "stats", "report"])
        let waves = page.elements("svg")[1].elements("text").filter { $0.attributes["class"] == "axis" }.map(\.text)
        #expect(waves == ["wave 1", "wave 2", "wave 3", "wave 4"])
        let conflicts = (try folder.json("var/nightly.json")["conflicts"] as! [[String: Any]]).count
        if conflicts == 0 {   // close_stale and purge_old did not overlap this time: no table, and the page says so
            #expect(page.elements(class: "conflicts").isEmpty)
            #expect(page.root.text.contains("No conflicts."))
        } else {
            #expect(page.elements(class: "conflicts").first?.elements("tr").count ?? 0 == 1 + min(conflicts, 100))
        }
        let again = try Batchrun.run(["report", "var/nightly.json", "--html", "var/again.html"], in: folder.url)
        #expect(again.status == 0)
        #expect(try Self.difference(between: folder.path("var/again.html"), and: folder.path("var/nightly.html")) == nil)
    }

    @Test("a run that fails: what went wrong (escaped), the skipped job without a bar, status failed")
    func failed() throws {
        let folder = try TemporaryFolder()
        try folder.write("feed.csv", "id,minutes\n1,3.5\n2,<b>abc</b>\n")
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              T: { columns: { id: integer primary key, minutes: real } }
            jobs:
              load: { steps: [{ insert: { entity: T, from: feed.csv } }] }
              after: { needs: load, steps: [{ fetch: { entity: T } }] }
              alone: { steps: [{ fetch: { entity: T } }] }
            """)
        let result = try Batchrun.run(["job.yaml", "--html", "r.html", "--jobs", "1"], in: folder.url)
        #expect(result.status == 1)
        let page = try checkPage(folder.path("r.html"), jobs: ["load", "after", "alone"])
        #expect(page.elements(class: "badge").first?.text == "failed")
        #expect(status(of: "load", in: page) == "failed" && status(of: "after", in: page) == "skipped"
                && status(of: "alone", in: page) == "ok")
        let problems = try #require(page.elements(class: "problems").first).elements("li").map(\.text)
        #expect(problems.count == 2)
        #expect(problems[0].hasPrefix("failed load: ") && problems[0].contains("\"<b>abc</b>\""), "\(problems)")
        #expect(problems[1] == "skipped after: needs load failed")
        #expect(page.elements("b").isEmpty)
        let after = try #require(page.elements("svg")[0].elements("g").first { $0.elements("title").first?.text.hasPrefix("after:") == true })
        #expect(after.elements("rect").isEmpty && after.elements("text").last?.text == "skipped: needs load failed")
        let counts = try #require(page.elements(class: "counts").first).text
        #expect(counts.contains("1 ok") && counts.contains("1 failed") && counts.contains("1 skipped"))
    }

    @Test("a cancelled run (SIGINT midway) still writes its page: status cancelled, the job that never started says so")
    func cancelled() throws {
        let folder = try TemporaryFolder()
        try Batchrun.writeLongFeed(in: folder)
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              T: { columns: { id: integer primary key, minutes: real } }
            jobs:
              load: { batch_size: 500, steps: [{ insert: { entity: T, from: feed.csv } }] }
              after: { needs: load, steps: [{ fetch: { entity: T } }] }
            """)
        let process = try Batchrun.startUntilRows(in: "T", folder, ["job.yaml", "--html", "r.html", "--report", "r.json"])
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        let page = try checkPage(folder.path("r.html"), jobs: ["load", "after"])
        #expect(page.elements(class: "badge").first?.text == "cancelled")
        #expect(status(of: "load", in: page) == "cancelled" && status(of: "after", in: page) == "cancelled")
        let bars = page.elements("svg")[0].elements("g").map { ($0.elements("title").first!.text, $0.elements("rect").count) }
        #expect(bars.first?.0.hasPrefix("load: cancelled, started at") == true && bars.first!.1 >= 1)
        #expect(bars.last?.0 == "after: cancelled before it started" && bars.last?.1 == 0)
        // The inserted rows the page shows are the committed ones the JSON report counts.
        let inserted = ((try folder.json("r.json")["jobs"] as! [[String: Any]])[0]["rows"] as! [String: Int])["inserted"]!
        #expect(inserted > 0 && row(of: "load", in: page)["inserted"] == Self.number(inserted))
    }

    @Test("a resumed run: its page says which run it continued, the job done earlier is marked and has no bar")
    func resumed() throws {
        let folder = try TemporaryFolder()
        try Batchrun.writeLongFeed(in: folder)
        try folder.write("job.yaml", """
            version: 1
            store: store.sqlite
            entities:
              T: { columns: { id: integer primary key, minutes: real } }
              Seen: { columns: { id: integer primary key } }
            jobs:
              first: { steps: [{ insert: { entity: Seen, rows: [{ id: 1 }] } }] }
              load: { needs: first, batch_size: 500, steps: [{ insert: { entity: T, from: feed.csv } }] }
            """)
        let process = try Batchrun.startUntilRows(in: "T", folder, ["job.yaml", "--quiet"])
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()

        let resumed = try Batchrun.run(["job.yaml", "--resume", "--quiet", "--html", "r.html"], in: folder.url)
        #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
        let page = try checkPage(folder.path("r.html"), jobs: ["first", "load"])
        let facts = try #require(page.elements(class: "facts").first)
        let names = facts.elements("dt").map(\.text), values = facts.elements("dd").map(\.text)
        #expect(values[try #require(names.firstIndex(of: "run"))] == "2, resumed from run 1")
        #expect(row(of: "first", in: page)["resumed"] == "done earlier")
        #expect(row(of: "load", in: page)["resumed"] == "")
        let bars = page.elements("svg")[0].elements("g").map { ($0.elements("title").first!.text, $0.elements("rect").count) }
        #expect(bars.contains { $0 == ("first: done earlier", 0) } && bars.contains { $0.0.hasPrefix("load: ok") && $0.1 >= 1 }, "\(bars)")
        // The rows this attempt inserted are what was left after the kill.
        let inserted = Int(try #require(row(of: "load", in: page)["inserted"]).replacingOccurrences(of: ",", with: ""))!
        #expect(inserted > 0 && inserted < 400_000)
    }

    @Test("report: several reports or a folder of them, one section each; a file that is not a report exits 2")
    func reportCommand() throws {
        let folder = try TemporaryFolder()
        for name in ["a", "b"] {
            try folder.write("\(name).yaml", """
                version: 1
                store: store.sqlite
                entities:
                  T: { columns: { id: integer primary key } }
                jobs:
                  put_\(name): { steps: [{ insert: { entity: T, rows: [{ id: \(name == "a" ? 1 : 2) }] } }] }
                """)
        }
        let run = try Batchrun.run(["a.yaml", "b.yaml", "--report", "reports", "--html", "both.html"], in: folder.url)
        #expect(run.status == 0, "\(run.stderr)")
        let both = try HTMLDocument(try String(contentsOfFile: folder.path("both.html"), encoding: .utf8))
        #expect(both.elements("section").map { $0.elements("h2").first?.text } == ["a.yaml", "b.yaml"])
        let fromFolder = try Batchrun.run(["report", "reports", "--html", "folder.html"], in: folder.url)
        #expect(fromFolder.status == 0)
        #expect(try Self.difference(between: folder.path("folder.html"), and: folder.path("both.html")) == nil)

        try folder.write("bad.json", #"{ "schema": 1, "file": "x" }"#)
        let bad = try Batchrun.run(["report", "bad.json", "--html", "bad.html"], in: folder.url)
        #expect(bad.status == 2 && bad.stderr.contains("bad.json: not a batchrun JSON report (missing key"), "\(bad.stderr)")
        let missing = try Batchrun.run(["report", "nothing.json", "--html", "x.html"], in: folder.url)
        #expect(missing.status == 2 && missing.stderr.contains("nothing.json: no such file"))
        let noOutput = try Batchrun.run(["report", "reports/a.json"], in: folder.url)
        #expect(noOutput.status == 2 && noOutput.stderr.contains("--html"))
        #expect(!FileManager.default.fileExists(atPath: folder.path("bad.html")))
    }

    /// Thousands separators as the reports print them.
    static func number(_ value: Int) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.locale = Locale(identifier: "en_US")
        return formatter.string(from: NSNumber(value: value))!
    }
}
