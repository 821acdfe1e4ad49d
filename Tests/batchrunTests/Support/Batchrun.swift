import Foundation
import Testing

/// Runs the built `batchrun` binary as a user would, capturing its output and exit status.
struct Batchrun {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// True when the process ended by a signal rather than exiting.
        var signalled: Bool
    }

    /// The package's root folder (this file is Tests/batchrunTests/Support/Batchrun.swift).
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The binary built beside the test bundle; `BATCHRUN_BIN` overrides.
    static let binary: URL = {
        if let path = ProcessInfo.processInfo.environment["BATCHRUN_BIN"] { return URL(fileURLWithPath: path) }
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("batchrun"),
            Bundle.main.bundleURL.appendingPathComponent("batchrun"),
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("batchrun"),
            packageRoot.appendingPathComponent(".build/debug/batchrun"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates.last!
    }()

    @discardableResult
    static func run(_ arguments: [String], in directory: URL, environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = directory.appendingPathComponent(".stdout-\(UUID().uuidString)")
        let err = directory.appendingPathComponent(".stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: try String(contentsOf: out, encoding: .utf8),
                      stderr: try String(contentsOf: err, encoding: .utf8),
                      signalled: process.terminationReason == .uncaughtSignal)
    }

    /// `feed.csv` in `folder`: 400,000 rows of `id,minutes`, long enough to stop a run in the middle of.
    static func writeLongFeed(in folder: TemporaryFolder) throws {
        var feed = "id,minutes\n"
        for id in 1...400_000 { feed += "\(id),\(id % 600)\n" }
        try folder.write("feed.csv", feed)
    }

    /// Starts `batchrun ARGUMENTS` in `folder` without waiting; its output goes to `output`
    /// (nowhere by default); `environment` adds to this process's.
    static func start(_ arguments: [String], in folder: TemporaryFolder, output: FileHandle = .nullDevice,
                      environment: [String: String] = [:]) throws -> Process {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = folder.url
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        process.standardOutput = output
        process.standardError = output
        try process.run()
        return process
    }

    /// Starts `batchrun ARGUMENTS` in `folder` and returns once table `table` of its store
    /// (`store.sqlite`) has rows: the run is in the middle of its work.
    static func startUntilRows(in table: String, _ folder: TemporaryFolder, _ arguments: [String]) throws -> Process {
        let process = try start(arguments, in: folder)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let store = try? StoreInspector(path: folder.path("store.sqlite")),
               let count = try? store.count("SELECT count(*) FROM \(table)"), count > 0 {
                break
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return process
    }
}

/// A fresh temporary folder, removed when the test ends.
final class TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func path(_ relative: String) -> String { url.appendingPathComponent(relative).path }

    /// Writes a file (creating folders) and returns its path.
    @discardableResult
    func write(_ relative: String, _ text: String) throws -> String {
        let file = url.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    /// Copies a folder of the package (like `examples`) into this one, keeping its name.
    func copyFromPackage(_ relative: String) throws {
        let destination = url.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Batchrun.packageRoot.appendingPathComponent(relative), to: destination)
    }

    /// A JSON object file in this folder (a `--report`), parsed.
    func json(_ relative: String) throws -> [String: Any] {
        let data = try Data(contentsOf: url.appendingPathComponent(relative))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Every file below the folder, relative, sorted.
    func files() -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: url.path)
        var result: [String] = []
        while let next = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path(next), isDirectory: &isDirectory)
            if !isDirectory.boolValue { result.append(next) }
        }
        return result.sorted()
    }
}
