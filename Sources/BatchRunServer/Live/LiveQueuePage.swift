import BatchRunKit
import BatchRunRender
import Foundation

/// `batchrun serve`'s page: one self-contained HTML page in the run report's style (no assets
/// from the network). Its live part (`#live`) is replaced by each server-sent event; where
/// scripts are off, the page reloads itself every 5 seconds.
///
/// ```swift
/// let html = LiveQueuePage.page(snapshot, rates: [:], nonce: "n0nce")
/// ```
package enum LiveQueuePage {
    /// The whole page; `nonce` lets its one inline script run under the page's policy.
    package static func page(_ snapshot: QueueSnapshot, rates: [String: Double], nonce: String) -> String {
        var page = Markup()
        page.trusted("<!DOCTYPE html>\n")
        page.element("html", ["lang": "en"]) { html in
            html.element("head") { head in
                head.empty("meta", ["charset": "utf-8"])
                head.empty("meta", ["http-equiv": "Content-Security-Policy",
                                    "content": "default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-\(nonce)'; connect-src 'self'"])
                head.empty("meta", ["name": "viewport", "content": "width=device-width, initial-scale=1"])
                head.element("noscript") { $0.empty("meta", ["http-equiv": "refresh", "content": "5"]) }
                head.element("title", text: "batchrun serve: \(snapshot.queue)")
                head.element("style") { $0.trusted(ReportTheme.styleSheet + extraStyle) }
            }
            html.newline()
            html.element("body") { body in
                body.element("h1", text: "batchrun queue: \(snapshot.queue)")
                body.element("div", ["id": "live"]) { live in live.trusted(fragment(snapshot, rates: rates)) }
                body.element("footer", text: "batchrun \(BatchRunVersion.current) serve: read-only; updates every second by server-sent events (every 5 s without scripts).")
                body.element("script", ["nonce": nonce]) { $0.trusted(script) }
            }
        }
        page.newline()
        return page.output
    }

    static let script = """
        (function () {
          if (!window.EventSource) return;
          var live = document.getElementById("live");
          var events = new EventSource("events");
          events.onmessage = function (event) { live.innerHTML = JSON.parse(event.data).html; };
        })();
        """

    static let extraStyle = """
        progress { width: 12em; height: 0.9em; vertical-align: middle; }
        td.bar { white-space: nowrap; }
        """

    /// The part that changes: counts, running items, waiting items, schedules, finished and failed items.
    package static func fragment(_ snapshot: QueueSnapshot, rates: [String: Double]) -> String {
        var body = Markup()
        body.element("dl", ["class": "facts"]) { facts in
            facts.element("dt", text: "as of")
            facts.element("dd", ["id": "as-of"], text: ReportTheme.timestamp(snapshot.takenAt))
            if snapshot.pause.queue || !snapshot.pause.groups.isEmpty {
                facts.element("dt", text: "paused")
                facts.element("dd", ["class": "paused"],
                              text: snapshot.pause.queue ? "the whole queue: no new item starts" : "groups \(snapshot.pause.groups.joined(separator: ", "))")
            }
            facts.element("dt", text: "items")
            facts.element("dd", ["class": "counts"]) { counts in
                for state in QueueItemState.allCases {
                    counts.element("span", ["class": "count-\(state.rawValue)"]) { item in
                        HTMLReportSection.dot(QueueHTMLPage.color(state), into: &item)
                        item.text("\(snapshot.counts[state.rawValue] ?? 0) \(state.rawValue)")
                    }
                }
            }
        }
        section("running", snapshot.items(in: [.running]), into: &body,
                columns: ["item", "job", "progress", "rows", "rows/s", "elapsed", "left", "process"]) { item, row in
            row.element("td", ["class": "name"], text: item.name)
            row.element("td", text: (item.jobs ?? []).isEmpty ? "–" : (item.jobs ?? []).joined(separator: ", "))
            let elapsed = item.startedAt.map { snapshot.takenAt.timeIntervalSince($0) }
            row.element("td", ["class": "bar"]) { cell in
                if let fraction = item.fraction {
                    let percent = String(format: "%.1f%%", fraction * 100)
                    cell.element("progress", ["class": "item-progress", "data-item": item.key, "max": "1",
                                              "value": String(format: "%.4f", fraction), "aria-label": "\(percent) of \(item.name)"], text: percent)
                    cell.text(" \(percent)")
                } else {
                    // Nothing says how much is to come (no feed): the bar shows work under way, the rows how far.
                    cell.element("progress", ["class": "item-progress", "data-item": item.key, "aria-label": "rows so far of \(item.name)"],
                                 text: item.rows.map(ReportPrinter.number) ?? "")
                }
                if item.orphaned == true { cell.text(" orphaned") }
                if item.cancelling == true { cell.text(" being cancelled") }
            }
            row.element("td", ["class": "n rows"], text: item.rows.map(ReportPrinter.number) ?? "–")
            row.element("td", ["class": "n rate"], text: rates[item.key].map { ReportPrinter.number(Int($0.rounded())) } ?? "–")
            row.element("td", ["class": "n elapsed"], text: elapsed.map { DurationFormat.compact.string($0) } ?? "–")
            let left = item.fraction.flatMap { fraction in elapsed.flatMap { fraction > 0.001 ? $0 * (1 - fraction) / fraction : nil } }
            row.element("td", ["class": "n left"], text: left.map { DurationFormat.compact.string($0) } ?? "–")
            row.element("td", text: item.process ?? "–")
        }
        batches(snapshot.batches, into: &body)
        section("scheduled and retryable", snapshot.items(in: [.scheduled, .retryable]), into: &body, columns: ["item", "state", "due", "attempts", "error"]) { item, row in
            row.element("td", ["class": "name"], text: item.name)
            row.element("td", ["class": "status"]) { state(&$0, item) }
            row.element("td", text: item.runAt ?? "–")
            row.element("td", ["class": "n"], text: "\(item.attempts) of \(item.maxAttempts)")
            row.element("td", text: item.error.map(firstLine).map(redacted) ?? "")
        }
        body.element("h2", text: "schedules (\(snapshot.schedules.count))")
        if snapshot.schedules.isEmpty {
            body.element("p", ["class": "empty"], text: "No schedules.")
        } else {
            body.element("table", ["class": "schedules"]) { table in
                HTMLReportSection.headerRow(["schedule", "cron", "time zone", "next due"], numericFrom: 9, into: &table)
                for schedule in snapshot.schedules {
                    table.element("tr") { row in
                        row.element("td", ["class": "name"], text: schedule.name)
                        row.element("td", text: schedule.cron)
                        row.element("td", text: schedule.timeZone)
                        row.element("td", text: schedule.nextDue ?? "–")
                    }
                }
            }
        }
        section("failed", snapshot.items(in: [.failed]), into: &body, columns: ["item", "ended", "first error", "output"]) { item, row in
            row.element("td", ["class": "name"], text: item.name)
            row.element("td", text: item.ended.map { ReportTheme.timestamp($0) } ?? "–")
            row.element("td", ["class": "error"], text: item.error.map(firstLine).map(redacted) ?? "–")
            row.element("td") { links(&$0, item) }
        }
        section("last finished", snapshot.items(in: [.done, .cancelled]), into: &body, columns: ["item", "state", "ended", "output"]) { item, row in
            row.element("td", ["class": "name"], text: item.name)
            row.element("td", ["class": "status"]) { state(&$0, item) }
            row.element("td", text: item.ended.map { ReportTheme.timestamp($0) } ?? "–")
            row.element("td") { links(&$0, item) }
        }
        return body.output
    }

    /// A row per fan-out batch: a bar of its parts done, the parts by state, rows so far, its completion.
    private static func batches(_ batches: [QueueBatch], into body: inout Markup) {
        guard !batches.isEmpty else { return }
        body.newline()
        body.element("h2", text: "batches (\(batches.count))")
        body.element("div", ["class": "scroll"]) { scroll in
            scroll.element("table", ["class": "batches"]) { table in
                HTMLReportSection.headerRow(["batch", "job", "parts done", "parts", "rows", "completion"], numericFrom: 99, into: &table)
                for batch in batches {
                    table.element("tr", ["data-batch": String(batch.id)]) { row in
                        row.element("td", ["class": "name"], text: String(batch.id))
                        row.element("td", text: batch.job)
                        let done = batch.parts[QueueItemState.done.rawValue] ?? 0
                        row.element("td", ["class": "bar"]) { cell in
                            cell.element("progress", ["class": "batch-progress", "data-batch": String(batch.id), "max": String(batch.partCount),
                                                      "value": String(done), "aria-label": "\(done) of \(batch.partCount) parts of batch \(batch.id)"],
                                         text: "\(done) of \(batch.partCount)")
                            cell.text(" \(done) of \(batch.partCount)")
                        }
                        let order = [QueueBatch.waiting] + QueueItemState.allCases.map(\.rawValue)
                        row.element("td", text: order.compactMap { state in batch.parts[state].map { "\($0) \(state)" } }.joined(separator: " · "))
                        row.element("td", ["class": "n rows"], text: ReportPrinter.number(batch.rows))
                        row.element("td", text: batch.completion.map { $0.state } ?? "–")
                    }
                }
            }
        }
    }

    private static func section(_ title: String, _ items: [QueueSnapshot.Item], into body: inout Markup, columns: [String],
                                row: (QueueSnapshot.Item, inout Markup) -> Void) {
        body.newline()
        body.element("h2", text: "\(title) (\(items.count))")
        guard !items.isEmpty else { return body.element("p", ["class": "empty"], text: "No items.") }
        body.element("div", ["class": "scroll"]) { scroll in
            scroll.element("table", ["class": "items \(title.replacingOccurrences(of: " ", with: "-"))"]) { table in
                HTMLReportSection.headerRow(columns, numericFrom: 99, into: &table)
                for item in items { table.element("tr", ["data-item": item.key]) { cells in row(item, &cells) } }
            }
        }
    }

    private static func state(_ cell: inout Markup, _ item: QueueSnapshot.Item) {
        HTMLReportSection.dot(QueueHTMLPage.color(item.state), into: &cell)
        cell.text(item.state.rawValue)
    }

    private static func links(_ cell: inout Markup, _ item: QueueSnapshot.Item) {
        let key = pathSegment(item.key)
        cell.element("a", ["href": "items/\(key)/report.html"], text: "report")
        cell.text(" · ")
        cell.element("a", ["href": "items/\(key)/log"], text: "log")
    }

    private static func firstLine(_ text: String) -> String {
        text.split(separator: "\n").first.map(String.init) ?? text
    }

    /// `text` percent-encoded for a URL's path segment: ASCII letters, digits and `-._` kept,
    /// every other byte of its UTF-8 as `%XX` (without Foundation's CharacterSet, whose
    /// `.alphanumerics` loads ICU's Unicode data into `serve`).
    static func pathSegment(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A password in a URL (`scheme://user:secret@host`) as `***`.
    package static func redacted(_ text: String) -> String {
        text.replacing(/(?<head>[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\/\s:@]*):[^@\s\/]*@/) { "\($0.head):***@" }
    }
}
