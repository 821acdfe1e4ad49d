import BatchRunRender
import Testing

@Suite("Progress line")
struct ProgressLineTests {
    @Test("each running job's percent, rows, rate and time left; a bar where the terminal is wide enough")
    func progressLine() {
        let jobs = [ReportPrinter.JobProgress(job: "load", rows: 103_200, rate: 16_105, fraction: 0.238, secondsLeft: 20.4),
                    ReportPrinter.JobProgress(job: "stats", rows: 1_200)]
        let wide = ReportPrinter.progressLine(jobs, width: 200)
        #expect(wide == "running: load 23.8% [███░░░░░░░░░░░░░] 103,200 rows (16,105/s, 20.40s left) · stats 1,200 rows")
        let narrow = ReportPrinter.progressLine(jobs, width: 80)
        #expect(narrow == "running: load 23.8% 103,200 rows (16,105/s, 20.40s left) · stats 1,200 rows")
        #expect(ReportPrinter.progressLine([], width: 80) == "")
    }
}
