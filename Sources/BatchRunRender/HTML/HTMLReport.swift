import BatchRunKit
import Foundation

/// The run report as one self-contained HTML page (`--html FILE.html`, `batchrun report`):
/// inline CSS and SVG, no scripts, nothing from the network, readable with JavaScript off.
/// Per job file: a header, what went wrong, a timeline, the job graph, the jobs table, their
/// steps, each job's trend over earlier runs and the conflict report.
///
/// ```swift
/// let page = HTMLReport(sections: [.init(report: report)]).render()
/// ```
package struct HTMLReport {
    /// One job file's run, with its earlier runs when the store keeps a history.
    package struct Section {
        package var report: RunReport
        package var history: RunHistory?

        package init(report: RunReport, history: RunHistory? = nil) {
            self.report = report
            self.history = history
        }
    }

    package let sections: [Section]

    package init(sections: [Section]) {
        self.sections = sections
    }
    /// How many conflicts are listed one by one (the counts cover all of them).
    package static let conflictLimit = 100

    package func render() -> String {
        Self.page(title: title) { body in
            if sections.count > 1 {
                body.element("nav") { nav in
                    nav.element("ol") { list in
                        for (index, section) in sections.enumerated() {
                            list.element("li") { item in
                                item.element("a", ["href": "#file-\(index + 1)"], text: section.report.file)
                                item.text(" ")
                                Self.badge(section.report.status, into: &item)
                            }
                        }
                    }
                }
            }
            for (index, section) in sections.enumerated() {
                body.newline()
                body.element("section", ["class": "file", "id": "file-\(index + 1)"]) { html in
                    HTMLReportSection(section: section, number: index + 1, titled: sections.count > 1).render(into: &html)
                }
            }
            body.element("footer", text: "Written by batchrun \(BatchRunVersion.current) from the run report (schema "
                         + "\(sections.first?.report.schema ?? 1)). Self-contained: no scripts, nothing loaded from the network.")
        }
    }

    /// A self-contained page: the theme's style sheet inline, a policy that loads nothing from
    /// anywhere, `title` as its heading and `content` after it.
    package static func page(title: String, _ content: (inout Markup) -> Void) -> String {
        var page = Markup()
        page.trusted("<!DOCTYPE html>\n")
        page.element("html", ["lang": "en"]) { html in
            html.element("head") { head in
                head.empty("meta", ["charset": "utf-8"])
                head.empty("meta", ["http-equiv": "Content-Security-Policy", "content": "default-src 'none'; style-src 'unsafe-inline'"])
                head.empty("meta", ["name": "viewport", "content": "width=device-width, initial-scale=1"])
                head.element("title", text: title)
                head.element("style") { $0.trusted(ReportTheme.styleSheet) }
            }
            html.newline()
            html.element("body") { body in
                body.element("h1", text: title)
                content(&body)
            }
        }
        page.newline()
        return page.output
    }

    /// Writes `page` to `path` atomically, creating folders as needed.
    package static func write(_ page: String, to path: String) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(page.utf8).write(to: url, options: .atomic)
    }

    /// Writes the page beside `path` and renames it into place, creating folders as needed.
    package func write(to path: String) throws {
        try Self.write(render(), to: path)
    }

    package var title: String {
        sections.count == 1 ? "batchrun: \(sections[0].report.file)" : "batchrun: \(sections.count) job files"
    }

    package static func badge(_ status: RunReport.Status, into markup: inout Markup) {
        markup.element("span", ["class": "badge", "style": "background:\(ReportTheme.color(status))"], text: status.rawValue)
    }
}
