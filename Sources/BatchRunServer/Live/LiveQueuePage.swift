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
///
/// With `serve --actions` (`PageActions`), a signed-in reader has a button per action beside
/// what it acts on, each a form POST that carries the session's form token.
package enum LiveQueuePage {
    /// How many lines of the audit log the page lists, newest first.
    package static let auditShown = 50

    /// The whole page; `nonce` lets its one inline script run under the page's policy.
    package static func page(_ snapshot: QueueSnapshot, rates: [String: Double], nonce: String, actions: PageActions = .none) -> String {
        var page = Markup()
        page.trusted("<!DOCTYPE html>\n")
        page.element("html", ["lang": "en"]) { html in
            html.element("head") { head in
                head.empty("meta", ["charset": "utf-8"])
                head.empty("meta", ["http-equiv": "Content-Security-Policy",
                                    "content": "default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-\(nonce)'; connect-src 'self'; form-action 'self'"])
                head.empty("meta", ["name": "viewport", "content": "width=device-width, initial-scale=1"])
                head.element("noscript") { $0.empty("meta", ["http-equiv": "refresh", "content": "5"]) }
                head.element("title", text: "batchrun serve: \(snapshot.queue)")
                head.element("style") { $0.trusted(ReportTheme.styleSheet + extraStyle) }
            }
            html.newline()
            html.element("body") { body in
                body.element("h1", text: "batchrun queue: \(snapshot.queue)")
                // Outside the part that each event replaces: what is typed into it stays.
                signIn(actions, into: &body)
                body.element("div", ["id": "live"]) { live in live.trusted(fragment(snapshot, rates: rates, actions: actions)) }
                let mode = actions == .none ? "read-only" : "actions signed in"
                body.element("footer", text: "batchrun \(BatchRunVersion.current) serve: \(mode); updates every second by server-sent events (every 5 s without scripts).")
                body.element("script", ["nonce": nonce]) { $0.trusted(script) }
            }
        }
        page.newline()
        return page.output
    }

    /// Replaces `#live` with each event's HTML, but never under a pressed button: a click is a
    /// press and a release on the same element, so a replacement between the two would lose it.
    /// The newest HTML waits until the release's click has run; a submitted form ends the events.
    static let script = """
        (function () {
          if (!window.EventSource) return;
          var live = document.getElementById("live");
          var events = new EventSource("events");
          var pressed = false, leaving = false, waiting = null;
          events.onmessage = function (event) {
            var html = JSON.parse(event.data).html;
            if (pressed) { waiting = html; } else if (!leaving) { live.innerHTML = html; }
          };
          live.addEventListener("pointerdown", function () { pressed = true; });
          function released() {
            setTimeout(function () {
              pressed = false;
              if (waiting !== null && !leaving) { live.innerHTML = waiting; }
              waiting = null;
            }, 0);
          }
          document.addEventListener("pointerup", released);
          document.addEventListener("pointercancel", released);
          live.addEventListener("submit", function () { leaving = true; events.close(); });
        })();
        """

    static let extraStyle = """
        progress { width: 12em; height: 0.9em; vertical-align: middle; }
        td.bar { white-space: nowrap; }
        form.action { display: inline; margin: 0; }
        form.action button { font: inherit; font-size: 0.85em; padding: 0 0.5em; }
        #session { margin: 0.5em 0 1em; }
        """

    /// The part that changes: counts, running items, waiting items, schedules, finished and
    /// failed items, the audit log; with `actions` signed in, a button beside each thing acted on.
    package static func fragment(_ snapshot: QueueSnapshot, rates: [String: Double], actions: PageActions = .none) -> String {
        let token = actions.formToken
        var body = Markup()
        body.element("dl", ["class": "facts"]) { facts in
            facts.element("dt", text: "as of")
            facts.element("dd", ["id": "as-of"], text: ReportTheme.timestamp(snapshot.takenAt))
            if snapshot.pause.queue || !snapshot.pause.groups.isEmpty {
                facts.element("dt", text: "paused")
                facts.element("dd", ["class": "paused"]) { paused in
                    paused.text(snapshot.pause.queue ? "the whole queue: no new item starts" : "groups \(snapshot.pause.groups.joined(separator: ", "))")
                    if snapshot.pause.queue { button("resume", label: "resume the queue", token: token, into: &paused) }
                    for group in snapshot.pause.groups {
                        button("resume", fields: ["group": group], label: "resume \(group)", token: token, into: &paused)
                    }
                }
            }
            if !snapshot.pause.queue, token != nil {
                facts.element("dt", text: "workers")
                facts.element("dd") { button("pause", label: "pause the queue", token: token, into: &$0) }
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
                columns: ["item", "job", "progress", "rows", "rows/s", "elapsed", "left", "process"] + actionColumn(token)) { item, row in
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
            action("cancel", item, token: token, into: &row)
        }
        batches(snapshot.batches, into: &body)
        let pending = snapshot.items(in: [.pending])
        section("pending", pending, into: &body, columns: ["item", "priority"] + actionColumn(token),
                total: snapshot.counts[QueueItemState.pending.rawValue]) { item, row in
            row.element("td", ["class": "name"], text: item.name)
            row.element("td", ["class": "n"], text: String(item.priority))
            action("cancel", item, token: token, into: &row)
        }
        section("scheduled and retryable", snapshot.items(in: [.scheduled, .retryable]), into: &body,
                columns: ["item", "state", "due", "attempts", "error"] + actionColumn(token)) { item, row in
            row.element("td", ["class": "name"], text: item.name)
            row.element("td", ["class": "status"]) { state(&$0, item) }
            row.element("td", text: item.runAt ?? "–")
            row.element("td", ["class": "n"], text: "\(item.attempts) of \(item.maxAttempts)")
            row.element("td", text: item.error.map(firstLine).map(redacted) ?? "")
            action("cancel", item, token: token, into: &row)
        }
        body.element("h2", text: "schedules (\(snapshot.schedules.count))")
        if snapshot.schedules.isEmpty {
            body.element("p", ["class": "empty"], text: "No schedules.")
        } else {
            body.element("table", ["class": "schedules"]) { table in
                HTMLReportSection.headerRow(["schedule", "cron", "time zone", "next due"] + actionColumn(token), numericFrom: 9, into: &table)
                for schedule in snapshot.schedules {
                    table.element("tr") { row in
                        row.element("td", ["class": "name"], text: schedule.name)
                        row.element("td", text: schedule.cron)
                        row.element("td", text: schedule.timeZone)
                        row.element("td", text: schedule.nextDue ?? "–")
                        if token != nil {
                            row.element("td") { button("run-schedule", fields: ["schedule": schedule.name], label: "run now", token: token, into: &$0) }
                        }
                    }
                }
            }
        }
        section("failed", snapshot.items(in: [.failed]), into: &body, columns: ["item", "ended", "first error", "output"] + actionColumn(token)) { item, row in
            row.element("td", ["class": "name"], text: item.name)
            row.element("td", text: item.ended.map { ReportTheme.timestamp($0) } ?? "–")
            row.element("td", ["class": "error"], text: item.error.map(firstLine).map(redacted) ?? "–")
            row.element("td") { links(&$0, item) }
            action("retry", item, token: token, into: &row)
        }
        section("last finished", snapshot.items(in: [.done, .cancelled]), into: &body,
                columns: ["item", "state", "ended", "output"] + actionColumn(token)) { item, row in
            row.element("td", ["class": "name"], text: item.name)
            row.element("td", ["class": "status"]) { state(&$0, item) }
            row.element("td", text: item.ended.map { ReportTheme.timestamp($0) } ?? "–")
            row.element("td") { links(&$0, item) }
            if item.state == .cancelled { action("retry", item, token: token, into: &row) } else if token != nil { row.element("td", text: "") }
        }
        audit(snapshot.audit, into: &body)
        return body.output
    }

    /// The sign-in form (actions on, not signed in), or who is signed in with a sign-out button.
    private static func signIn(_ actions: PageActions, into body: inout Markup) {
        switch actions {
        case .none: return
        case .signIn:
            body.element("form", ["id": "session", "class": "sign-in", "method": "post", "action": "sign-in"]) { form in
                form.element("label", ["for": "token"], text: "Token ")
                form.empty("input", ["id": "token", "name": "token", "type": "password", "autocomplete": "current-password", "required": "required"])
                form.text(" ")
                form.element("button", ["type": "submit"], text: "sign in")
                form.text(" to cancel, retry, pause and resume, and run schedules from this page.")
            }
        case .signedIn(let who, let token):
            body.element("div", ["id": "session"]) { session in
                session.text("Signed in as ")
                session.element("strong", ["class": "who"], text: who)
                session.text(" ")
                button("sign-out", path: "sign-out", label: "sign out", token: token, into: &session)
            }
        }
    }

    /// The audit log's newest lines, newest first.
    private static func audit(_ entries: [QueueAuditEntry], into body: inout Markup) {
        body.newline()
        body.element("h2", ["id": "audit"], text: "Audit (\(entries.count))")
        guard !entries.isEmpty else { return body.element("p", ["class": "empty"], text: "No actions yet.") }
        body.element("div", ["class": "scroll"]) { scroll in
            scroll.element("table", ["class": "audit"]) { table in
                HTMLReportSection.headerRow(["at", "who", "action", "item"], numericFrom: 99, into: &table)
                for entry in entries.suffix(auditShown).reversed() {
                    table.element("tr") { row in
                        row.element("td", text: entry.at)
                        row.element("td", ["class": "who"], text: entry.who)
                        row.element("td", ["class": "action"], text: entry.action)
                        row.element("td", ["class": "name"], text: entry.item ?? (["pause", "resume"].contains(entry.action) ? "the queue" : "–"))
                    }
                }
            }
        }
    }

    /// The header of the actions' column, when signed in.
    private static func actionColumn(_ token: String?) -> [String] {
        token == nil ? [] : ["action"]
    }

    /// A cell with a button acting on `item` (when signed in).
    private static func action(_ name: String, _ item: QueueSnapshot.Item, token: String?, into row: inout Markup) {
        guard token != nil else { return }
        row.element("td") { button(name, fields: ["item": item.key], label: name, token: token, into: &$0) }
    }

    /// A one-button form that POSTs `fields` and the form token to `actions/NAME` (or `path`).
    private static func button(_ name: String, path: String? = nil, fields: KeyValuePairs<String, String> = [:], label: String,
                               token: String?, into markup: inout Markup) {
        guard let token else { return }
        markup.element("form", ["class": "action", "method": "post", "action": path ?? "actions/\(name)"]) { form in
            form.empty("input", ["type": "hidden", "name": "form_token", "value": token])
            for (key, value) in fields { form.empty("input", ["type": "hidden", "name": key, "value": value]) }
            form.element("button", ["type": "submit", "class": "act-\(name)", "data-action": name], text: label)
        }
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
                                total: Int? = nil, row: (QueueSnapshot.Item, inout Markup) -> Void) {
        body.newline()
        let shown = total.map { $0 > items.count ? "\(items.count) of \($0)" : "\($0)" } ?? "\(items.count)"
        body.element("h2", text: "\(title) (\(shown))")
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
