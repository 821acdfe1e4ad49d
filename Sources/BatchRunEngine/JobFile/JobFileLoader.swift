import BatchRunStore
import Foundation

/// Loads a job file: parses the YAML, builds the typed `JobFile`, and validates everything
/// (keys, types, the job graph, entities, columns, params and every SQL expression),
/// reporting all errors found in one `JobFileError`. It never opens or creates the store.
///
/// ```swift
/// do {
///     let file = try JobFileLoader(params: ["cutoff": "2026-02-01"]).load(path: "jobs/nightly.yaml")
/// } catch let error as JobFileError {
///     print(error.rendered)   // jobs/nightly.yaml:12:5: error: unknown key 'filter' ...; did you mean 'where'?
/// }
/// ```
public struct JobFileLoader: Sendable {
    /// A duration as job files write them (`500ms`, `30s`, `5m`, `1h`) in seconds; nil when it is not one.
    ///
    /// ```swift
    /// JobFileLoader.seconds("30s")   // 30
    /// ```
    package static func seconds(_ text: String) -> Double? {
        NodeReader.seconds(text)
    }

    /// Whether `text` can name an environment variable for `${env.NAME}`: letters, digits and
    /// `_`, not starting with a digit.
    package static func isEnvironmentName(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
        return text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }

    /// `--param NAME=VALUE` overrides, typed like plain YAML scalars.
    package var params: [String: String]
    /// `--store PATH`, relative to the current folder.
    package var storeOverride: String?
    /// Environment for `${env.VAR}`.
    package var environment: [String: String]
    /// The folder the file's relative paths resolve against; nil means the file's own folder
    /// (a queue item's resolve against its queue, wherever the item is).
    package var baseDirectory: String?
    /// False: expressions of a PostgreSQL store are not prepared on the server (a queue item,
    /// checked there when it was submitted); everything else is checked as always.
    package var checksExpressionsOnServer = true
    /// The folders a queue worker lets the file's feeds, outputs and SQLite store lie in; a
    /// path outside them is an error at its line (nil: anywhere).
    package var confinement: PathConfinement?
    /// Why shell hooks (`on_success`, ...) are not run, when they are not: each hook is then an
    /// error at its line (a queue worker's `--no-hooks`, or a PostgreSQL queue's without
    /// `--allow-hooks`).
    package var hookRefusal: String?
    /// What a confined worker lets the file reach besides its folders (`${env.NAME}`, stores,
    /// hosts, limits); nil: a trusted file, which reaches what the process may.
    package var rules: ConfinedItemRules?
    /// False for an item of a fan-out batch: a local glob is not listed when the file loads.
    /// The batch's parts were listed at `submit`, and a part's item reads only the part it
    /// names, whose reader checks it (the worker's roots, its fingerprint). Listed at each
    /// item's load, 400 parts cost 400 `stat`s an item, 160,000 a batch.
    package var listsFeedParts = true

    public init(params: [String: String] = [:], storeOverride: String? = nil,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.params = params
        self.storeOverride = storeOverride
        self.environment = environment
    }

    public func load(path: String) throws(JobFileError) -> JobFile {
        // Opened without blocking and checked to be a regular file: a FIFO or a device would
        // otherwise hang `check`, `run` and `submit` (or read forever).
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        var status = stat()
        if descriptor >= 0 && (fstat(descriptor, &status) != 0 || status.st_mode & S_IFMT != S_IFREG) {
            close(descriptor)
            let kind = switch status.st_mode & S_IFMT {
                case S_IFDIR: "a folder"
                case S_IFIFO: "a FIFO"
                case S_IFCHR, S_IFBLK: "a device"
                case S_IFSOCK: "a socket"
                default: "not a regular file"
            }
            throw JobFileError(diagnostics: [Diagnostic(at: nil, "\(path): is \(kind); a job file must be a regular file")])
        }
        let handle = descriptor >= 0 ? FileHandle(fileDescriptor: descriptor, closeOnDealloc: true) : nil
        guard let handle, let data = try? handle.read(upToCount: YAMLLimits.maxFileBytes + 1) ?? Data() else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot read" : "no such file"
            throw JobFileError(diagnostics: [Diagnostic(at: nil, "\(path): \(reason)")])
        }
        if data.count > YAMLLimits.maxFileBytes { throw Self.tooLarge(path) }
        guard let text = String(data: data, encoding: .utf8) else {
            throw JobFileError(diagnostics: [Diagnostic(at: SourceLocation(file: path, line: 1, column: 1),
                                                        "the job file is not UTF-8 text")])
        }
        return try load(text: text, path: path)
    }

    /// Loads a job file from text; `path` names it in errors and anchors its relative paths.
    public func load(text: String, path: String) throws(JobFileError) -> JobFile {
        if text.utf8.count > YAMLLimits.maxFileBytes { throw Self.tooLarge(path) }
        if let violation = YAMLLimits.check(text) {
            throw JobFileError(diagnostics: [Diagnostic(at: SourceLocation(file: path, line: violation.line, column: violation.column),
                                                        violation.message)],
                               sources: [path: text])
        }
        let root: YAMLNode?
        do {
            root = try YAMLNode.parse(text, file: path)
        } catch {
            var error = error
            error.sources[path] = text
            throw error
        }
        guard let root else {
            throw JobFileError(diagnostics: [Diagnostic(at: SourceLocation(file: path, line: 1, column: 1),
                                                        "the job file is empty; expected version, store, entities and jobs")],
                               sources: [path: text])
        }
        var builder = JobFileBuilder(path: path, source: text, loader: self)
        if let file = builder.build(root), builder.reader.diagnostics.isEmpty {
            if confinement != nil { Self.pauseForTestsAfterCheck(path: path, environment: environment) }
            return file
        }
        throw JobFileError(diagnostics: builder.reader.diagnostics.sorted(by: Self.sourceOrder), sources: [path: text])
    }

    /// Loads a job file that is in no file of its own (a PostgreSQL queue item's text) and
    /// that the run history knows by `runIdentity` (`postgresql://HOST:PORT/DB#ID`); `path`
    /// names it in errors.
    package func load(text: String, path: String, runIdentity: String?) throws(JobFileError) -> JobFile {
        var file = try load(text: text, path: path)
        file.runIdentity = runIdentity
        return file
    }

    static func tooLarge(_ path: String) -> JobFileError {
        JobFileError(diagnostics: [Diagnostic(at: SourceLocation(file: path, line: 1, column: 1),
                                              "the job file is larger than \(YAMLLimits.maxFileBytes / 1024) KiB, the limit for a job file; put large data in a feed (insert from:)")])
    }

    static func sourceOrder(_ a: Diagnostic, _ b: Diagnostic) -> Bool {
        let left = a.location.map { ($0.line, $0.column) } ?? (0, 0)
        let right = b.location.map { ($0.line, $0.column) } ?? (0, 0)
        return left < right
    }

    /// For tests of what is checked again at each open: with `BATCHRUN_TEST_PAUSE_AFTER_CHECK`
    /// naming a folder, a confined load that passed its checks writes `paused` there (holding
    /// the job file's path) and waits until `go` appears, then removes both, so a test can
    /// swap a folder for a symbolic link between the check and the opens.
    private static func pauseForTestsAfterCheck(path: String, environment: [String: String]) {
        guard let folder = environment["BATCHRUN_TEST_PAUSE_AFTER_CHECK"], !folder.isEmpty else { return }
        let paused = folder + "/paused", go = folder + "/go"
        _ = FileManager.default.createFile(atPath: paused, contents: Data(path.utf8))
        Backoff.wait(.infinity, until: { FileManager.default.fileExists(atPath: go) })
        try? FileManager.default.removeItem(atPath: go)
        try? FileManager.default.removeItem(atPath: paused)
    }
}
