import BatchRunKit
import Foundation

/// Colours, the style sheet and number formats of the HTML report.
package enum ReportTheme {
    /// A status's colour: bars, graph nodes and badges; the status is always written too.
    package static func color(_ status: JobStatus) -> String {
        statusColors[status] ?? "#78909c"
    }

    private static let statusColors: [JobStatus: String] = [
        .ok: "#2e7d32", .failed: "#c62828", .timedOut: "#e65100", .cancelled: "#b28704", .skipped: "#78909c",
    ]

    package static func color(_ status: RunReport.Status) -> String {
        switch status {
        case .ok: return color(JobStatus.ok)
        case .failed: return color(JobStatus.failed)
        case .cancelled: return color(JobStatus.cancelled)
        }
    }

    /// The colour of time spent queued (ready, waiting for a free slot under `--jobs`).
    package static let queued = "#b0bec5"

    /// Rows (fetched, inserted, updated, deleted) per second of run time: `45,000/s`, or `–`.
    package static func rate(_ job: JobReport) -> String {
        let rows = job.rows.fetched + job.rows.inserted + job.rows.updated + job.rows.deleted
        guard rows > 0, job.runSeconds > 0 else { return "–" }
        return ReportPrinter.number(Int((Double(rows) / job.runSeconds).rounded())) + "/s"
    }

    /// `2026-11-22 13:17:30 UTC`, or without seconds and zone `2026-11-22 13:17` (UTC too).
    /// (`gmtime_r`, not a `DateFormatter`: one costs ICU's calendar a call, and `serve` formats
    /// a hundred a page.)
    package static func timestamp(_ date: Date, seconds: Bool = true) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func padded(_ value: Int32, _ width: Int = 2) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let minute = "\(padded(parts.tm_year + 1900, 4))-\(padded(parts.tm_mon + 1))-\(padded(parts.tm_mday)) "
            + "\(padded(parts.tm_hour)):\(padded(parts.tm_min))"
        return seconds ? minute + ":\(padded(parts.tm_sec)) UTC" : minute
    }

    /// `name` cut to `limit` characters with an ellipsis in the middle, keeping both ends (job
    /// names often differ only at the end: `import_regional_…partition_07`); the full name
    /// goes in a tooltip.
    package static func shortened(_ name: String, to limit: Int) -> String {
        guard name.count > limit else { return name }
        let tail = (limit - 1) / 2
        return String(name.prefix(limit - 1 - tail)) + "…" + String(name.suffix(tail))
    }

    package static let styleSheet = """
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1f2328;background:#fff;margin:0;padding:24px 32px;max-width:1280px}
        h1{font-size:22px;margin:0 0 4px}
        h2{font-size:17px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid #d0d7de}
        h3{font-size:15px;margin:18px 0 6px}
        section.file{margin-bottom:48px}
        nav ol{margin:4px 0 0;padding-left:20px}
        a{color:#0969da}
        dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:12px 0}
        dl.facts dt{color:#57606a}
        dl.facts dd{margin:0;overflow-wrap:anywhere}
        .badge{display:inline-block;padding:0 8px;border-radius:10px;color:#fff;font-weight:600;font-size:12px;line-height:20px}
        .counts span{margin-right:12px;white-space:nowrap}
        .dot{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:4px;vertical-align:-1px}
        .scroll{overflow-x:auto;max-width:100%}
        table{border-collapse:collapse;font-size:13px;margin:6px 0}
        th,td{padding:3px 7px;border-bottom:1px solid #eaeef2;text-align:left;vertical-align:baseline}
        th{background:#f6f8fa;font-weight:600;white-space:nowrap}
        td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
        td.name{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;overflow-wrap:break-word;max-width:320px}
        td.value{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;overflow-wrap:break-word;max-width:260px}
        td.status{white-space:nowrap}
        table.trends td{vertical-align:middle}
        svg.trend{display:block}
        td.resolved{background:#f0f7f1}
        tr.failed td{background:#fff5f5}
        ul.problems{padding-left:20px}
        ul.problems li{margin:3px 0}
        ul.problems code{overflow-wrap:anywhere}
        .muted{color:#57606a}
        .legend span{margin-right:14px;font-size:12px;white-space:nowrap}
        svg text{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
        svg .label{font-size:12px;fill:#1f2328}
        svg .mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:11.5px}
        svg .axis{font-size:11px;fill:#57606a}
        svg .note{font-size:11px;fill:#57606a;font-style:italic}
        details summary{cursor:pointer;color:#0969da}
        .worse{color:#c62828;font-weight:600}
        .better{color:#2e7d32}
        footer{margin-top:32px;font-size:12px;color:#57606a}
        """
}
