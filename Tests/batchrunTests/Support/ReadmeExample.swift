import Foundation
import Testing
import TestSupport

/// An example of README.md (or a page of docs/): the YAML block and the shell block that follow a paragraph's
/// bold lead (`**Feeds from S3.**`), for a test to run as the README says.
struct ReadmeExample {
    var yaml: String
    var shell: String

    /// The first `yaml` block after `lead` in `document` (a path from the package's root), and
    /// the first `sh` block after that.
    init(after lead: String, in document: String = "README.md") throws {
        let readme = try String(contentsOf: Batchrun.packageRoot.appendingPathComponent(document), encoding: .utf8)
        let section = try #require(readme.range(of: lead), "\(document) has no \(lead)")
        func block(_ kind: String, from index: String.Index) throws -> (String, String.Index) {
            let start = try #require(readme.range(of: "```\(kind)\n", range: index..<readme.endIndex))
            let end = try #require(readme.range(of: "```\n", range: start.upperBound..<readme.endIndex))
            return (String(readme[start.upperBound..<end.lowerBound]), end.upperBound)
        }
        let (yaml, next) = try block("yaml", from: section.upperBound)
        self.yaml = yaml
        shell = try block("sh", from: next).0
    }

    /// Runs `script` with `/bin/sh -e` in `folder`, with `environment` over this process's: its
    /// exit status and what it printed (standard output and error together).
    static func runShell(_ script: String, in folder: TemporaryFolder, environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-e", "-c", script]
        shell.currentDirectoryURL = folder.url
        shell.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        shell.standardOutput = output
        shell.standardError = output
        try shell.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        return (shell.terminationStatus, printed)
    }

    /// The example's job file run again in `folder` on the local file `local` in place of its
    /// feed `feed`, into `var/local.sqlite`; the sessions the example left in its store `store`
    /// and those the local run left, for a test to compare.
    func sessions(in folder: TemporaryFolder, feed: String, store: String, local: String) throws -> (example: [String], local: [String]) {
        try folder.write("import_local.yaml", yaml.replacingOccurrences(of: feed, with: local)
            .replacingOccurrences(of: store, with: "var/local.sqlite"))
        let result = try Batchrun.run(["import_local.yaml", "--quiet"], in: folder.url)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let columns = HTTPFeedRunTests.sessionColumns
        return (try Self.rows(of: "Session", columns: columns, store: folder.path(store)),
                try Self.rows(of: "Session", columns: columns, store: folder.path("var/local.sqlite")))
    }

    /// The rows of `table` in the SQLite store at `path`, each as one line of its values.
    static func rows(of table: String, columns: [String], store path: String) throws -> [String] {
        let values = columns.map { "coalesce(\($0), '')" }.joined(separator: " || '|' || ")
        return try StoreInspector(path: path).strings("SELECT \(values) FROM \(table) ORDER BY 1")
    }
}
