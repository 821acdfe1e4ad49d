import BatchRunKit
import Foundation

/// `--log-format json`: each line the printer would write as one JSON object (`ts`, `level`,
/// `event`, `item`, `job`, `rows`, `message`) on standard output, errors on standard error.
extension ReportPrinter {
    func json(level: String = "info", event: String, job: String? = nil, rows: Int? = nil, message: String) {
        let text = LogFormat.jsonLine(level: level, event: event, job: job, rows: rows, message: message)
        line(String(text.dropLast()), toError: level == "error")
    }

    func jsonEvent(_ event: JobFileRun.Event) {
        switch event {
        case .jobStarted(let name, let index, let total):
            guard !quiet else { return }
            json(event: "job_started", job: name, message: "[\(index)/\(total)] START \(name)")
        case .jobFinished(let job, let index, let total):
            if quiet && job.status == .ok { return }
            let level = job.status == .ok || job.status == .skipped ? "info" : job.status == .cancelled ? "warning" : "error"
            var message = "[\(index)/\(total)] \(job.status.rawValue) \(job.name): \(Self.summary(job))"
            if let error = job.error { message += "; error: " + error }
            json(level: level, event: "job_\(job.status.rawValue)", job: job.name,
                 rows: job.rows.inserted + job.rows.updated + job.rows.deleted, message: message)
        case .hookFailed(let job, let hook, let message):
            json(level: "warning", event: "hook_failed", job: job, message: "\(hook) hook of job \(job) \(message)")
        case .progress:
            break
        case .retrying(let job, let reason):
            if !quiet { json(level: "warning", event: "batch_retrying", job: job, message: "retrying a batch of \(job): \(reason)") }
        case .startingOver(let job, let reason):
            json(level: "warning", event: "job_starting_over", job: job, message: "starting over job \(job): \(reason)")
        case .limitReached(let message):
            json(level: "error", event: "limit_reached", message: message + "; the item was stopped")
        }
    }

    func jsonFinalReport(_ report: RunReport) {
        let rows = report.jobs.reduce(0) { $0 + $1.rows.inserted + $1.rows.updated + $1.rows.deleted }
        json(level: report.status == .ok ? "info" : "error", event: "run_\(report.status.rawValue)", rows: rows,
             message: summaryLine(report).replacingOccurrences(of: "\u{1B}", with: ""))
    }
}
