import Foundation
import Testing
@testable import BatchRunKit

/// Replays what fuzzing found (`fuzz/regressions/TARGET/`) and the seed corpora through the real
/// job-file loader and feed readers: each input must end in a result or a clean error, without hanging.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fuzz")

    static func inputs(_ folder: String) -> [String] {
        ["regressions", "corpus"].flatMap { kind in
            let path = root.appendingPathComponent("\(kind)/\(folder)").path
            return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [])
                .filter { !$0.hasPrefix(".") }.sorted().map { "\(kind)/\(folder)/\($0)" }
        }
    }

    @Test("the folders hold inputs for every target")
    func present() {
        for target in ["jobfile", "csv", "tsv", "ndjson", "json", "gzip", "zstd"] { #expect(!Self.inputs(target).isEmpty, "\(target)") }
        #expect(Self.inputs("jobfile").contains { $0.hasPrefix("regressions/") })
    }

    @Test("job files load or fail with located errors", arguments: inputs("jobfile"))
    func jobFile(_ input: String) throws {
        let data = try Data(contentsOf: Self.root.appendingPathComponent(input))
        let started = Date()
        do {
            _ = try JobFileLoader(environment: [:]).load(text: String(decoding: data, as: UTF8.self), path: "fuzz.yaml")
        } catch {
            #expect(!error.diagnostics.isEmpty)
        }
        // A hang detector, not a speed test: these inputs once blew up exponentially (minutes);
        // a loaded CI machine takes 2 s for what takes milliseconds when idle.
        #expect(Date().timeIntervalSince(started) < 60, "\(input) took too long")
    }

    @Test("feeds read to the end or fail with a feed error", arguments:
            ["csv", "tsv", "ndjson", "json", "gzip", "zstd"].flatMap { target in inputs(target).map { (target, $0) } })
    func feed(_ target: String, _ input: String) throws {
        let format = FeedFormat(rawValue: target) ?? .csv
        let compression: FeedCompression = target == "gzip" ? .gzip : target == "zstd" ? .zstd : .none
        let bytes = [UInt8](try Data(contentsOf: Self.root.appendingPathComponent(input)))
        do {
            _ = try FeedFiles.records("fuzz.\(target)", bytes, format: format, compression: compression)
        } catch {
            #expect(error is FeedError, "\(input): \(error)")
        }
    }
}
