import ArgumentParser
import BatchRunKit
import BatchRunRender
import Foundation

/// `batchrun report REPORT.json --html FILE.html`: renders saved JSON reports (`--report`) as
/// one self-contained HTML page.
struct ReportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report",
        abstract: "Render saved JSON reports (written by run --report) as one self-contained HTML page.",
        discussion: """
            Each report gets its own section, in the order given; a folder stands for the \
            NAME.json reports in it (what --report writes when several files run).
            Example: batchrun report var/nightly.json --html var/nightly.html
            """)

    @Argument(help: ArgumentHelp("JSON reports, or folders of them.", valueName: "REPORT.json"))
    var reports: [String]

    @Option(help: ArgumentHelp("Where to write the HTML page.", valueName: "FILE.html"))
    var html: String

    func run() throws {
        var sections: [HTMLReport.Section] = []
        for path in try reportFiles() {
            do {
                let report = try RunReport(jsonData: Data(contentsOf: URL(fileURLWithPath: path)))
                sections.append(HTMLReport.Section(report: report, history: JobFileRun.earlierRuns(before: report)))
            } catch let error as DecodingError {
                throw CommandFailure("\(path): not a batchrun JSON report (\(Self.describe(error)))", status: ExitStatus.invalid)
            } catch {
                throw CommandFailure("\(path): \(error.localizedDescription)", status: ExitStatus.invalid)
            }
        }
        do {
            try HTMLReport(sections: sections).write(to: html)
        } catch {
            throw CommandFailure("could not write \(html): \(error.localizedDescription)", status: ExitStatus.failed)
        }
    }

    /// The files given, each folder replaced by the `.json` files in it, in name order.
    func reportFiles() throws -> [String] {
        var files: [String] = []
        for path in reports {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else { throw CommandFailure("\(path): no such file", status: ExitStatus.invalid) }
            guard isFolder.boolValue else {
                files.append(path)
                continue
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".json") }.sorted()
            if names.isEmpty { throw CommandFailure("\(path): a folder without .json reports", status: ExitStatus.invalid) }
            files += names.map { URL(fileURLWithPath: path).appendingPathComponent($0).path }
        }
        return files
    }

    /// `missing key "jobs"`, `wrong type at jobs.0.run_s`.
    static func describe(_ error: DecodingError) -> String {
        let path = { (context: DecodingError.Context) in
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let at = path(context)
            return "missing key \"\(key.stringValue)\"" + (at.isEmpty ? "" : " in \(at)")
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "unexpected value at \(path(context))"
        case .dataCorrupted(let context):
            let at = path(context)
            return at.isEmpty ? "not valid JSON" : "unreadable value at \(at)"
        @unknown default:
            return "\(error)"
        }
    }
}
