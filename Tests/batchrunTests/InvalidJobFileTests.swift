import Foundation
import Testing

/// The corpus in Fixtures/invalid: each file starts with `# expect: LINE:COLUMN: MESSAGE` lines,
/// one per error it must produce. `check` and `run` must report exactly those, exit 2 and
/// create nothing (no store, no output).
@Suite("Invalid job files")
struct InvalidJobFileTests {
    static let corpus = Batchrun.packageRoot.appendingPathComponent("Tests/batchrunTests/Fixtures/invalid")

    static var files: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: corpus.path)) ?? [])
            .filter { $0.hasSuffix(".yaml") }.sorted()
    }

    struct Expectation {
        var location: String?
        var message: String

        /// The text the error output must contain for this expectation.
        func needle(file: String) -> String {
            location.map { "\(file):\($0): error: \(message)" } ?? message
        }
    }

    static func expectations(of file: String) throws -> [Expectation] {
        let text = try String(contentsOf: corpus.appendingPathComponent(file), encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("# expect: ") else { return nil }
            let body = String(line.dropFirst("# expect: ".count))
            let parts = body.split(separator: ":", maxSplits: 2)
            if parts.count == 3, Int(parts[0]) != nil, Int(parts[1]) != nil {
                return Expectation(location: "\(parts[0]):\(parts[1])",
                                   message: String(parts[2]).trimmingCharacters(in: .whitespaces))
            }
            return Expectation(location: nil, message: body)
        }
    }

    @Test("the corpus is large enough")
    func corpusSize() {
        #expect(Self.files.count >= 40)
    }

    @Test("each invalid file is reported where it is wrong, and nothing is created", arguments: files)
    func reportsEveryError(file: String) throws {
        let expectations = try Self.expectations(of: file)
        try #require(!expectations.isEmpty, "\(file) has no '# expect:' line")
        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(at: Self.corpus.appendingPathComponent(file), to: folder.url.appendingPathComponent(file))
        try folder.write("data/sessions.csv", "id,user\n1,ann\n")
        let before = folder.files()

        for command in [["check", file], ["run", file], [file]] {
            let result = try Batchrun.run(command, in: folder.url)
            #expect(result.status == 2, "\(command) exited \(result.status)")
            for expectation in expectations {
                #expect(result.stderr.contains(expectation.needle(file: file)),
                        "\(command): missing «\(expectation.needle(file: file))» in:\n\(result.stderr)")
            }
            let reported = result.stderr.split(separator: "\n").filter { $0.contains(": error: ") }.count
            #expect(reported == expectations.count, "\(command): \(reported) errors reported, \(expectations.count) expected:\n\(result.stderr)")
            #expect(result.stderr.contains("nothing was run"))
            #expect(result.stdout.isEmpty)
        }
        #expect(folder.files() == before, "files were created: \(Set(folder.files()).subtracting(before))")
    }

    @Test("each located error shows its line and a caret under the column")
    func caretUnderColumn() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(at: Self.corpus.appendingPathComponent("misspelt_column.yaml"),
                                         to: folder.url.appendingPathComponent("job.yaml"))
        let result = try Batchrun.run(["check", "job.yaml"], in: folder.url)
        let lines = result.stderr.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let index = try #require(lines.firstIndex { $0.hasPrefix("job.yaml:16:43: error: no such column: statsu") })
        #expect(lines[index + 1] == #"      - fetch: { entity: Session, where: "statsu = 'open'" }"#)
        #expect(lines[index + 2] == String(repeating: " ", count: 42) + "^")
    }
}
