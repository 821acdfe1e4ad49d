import BatchRunKit
import Foundation

/// What one fuzz input is fed to: the job-file loader, one feed reader, or the CSV reader over
/// a decompressor (`gzip`, `zstd`: the input is the compressed file). The target comes from
/// `BATCHRUN_FUZZ_TARGET` (`jobfile`, `csv`, `tsv`, `ndjson`, `json`, `gzip`, `zstd`).
///
/// Every input must end in a clean result or a clean error; a crash, a hang or unbounded
/// memory is a finding.
enum FuzzTarget: String, CaseIterable {
    case jobfile, csv, tsv, ndjson, json, gzip, zstd

    static let current: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["BATCHRUN_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(Data("set BATCHRUN_FUZZ_TARGET to one of: \(allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
            exit(2)
        }
        return target
    }()

    /// A file the feed readers read each input from (they stream files, not memory).
    static let feedPath = FileManager.default.temporaryDirectory
        .appendingPathComponent("batchrun-fuzz-\(getpid())").path

    /// Runs one input; returns how many records or jobs it gave, or -1 for a clean error.
    @discardableResult
    func run(_ data: Data) -> Int {
        switch self {
        case .jobfile:
            do {
                let file = try JobFileLoader(environment: [:]).load(text: String(decoding: data, as: UTF8.self), path: "fuzz.yaml")
                return file.jobs.count
            } catch {
                return -1
            }
        case .csv, .tsv, .ndjson, .json, .gzip, .zstd:
            let format: FeedFormat = self == .tsv ? .tsv : self == .ndjson ? .ndjson : self == .json ? .json : .csv
            let compression: FeedCompression = self == .gzip ? .gzip : self == .zstd ? .zstd : .none
            guard FileManager.default.createFile(atPath: Self.feedPath, contents: data) else { return -1 }
            do {
                var reader = try FeedReaders.open(path: Self.feedPath, format: format, displayPath: "fuzz.\(rawValue)",
                                                  compression: compression)
                var count = 0
                while try reader.next() != nil { count += 1 }
                return count
            } catch {
                return -1
            }
        }
    }
}

/// libFuzzer's entry point: one input (built with `-sanitize=fuzzer -DFUZZING`; see `make fuzz`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTarget.current.run(bytes.map { Data(bytes: $0, count: count) } ?? Data())
    return 0
}

#if FUZZING
/// libFuzzer's driver, from the runtime `-sanitize=fuzzer` links in.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> CInt
#endif

/// The command. Fuzzing, it hands over to libFuzzer's driver (SwiftPM renames an executable's
/// `main`, so libFuzzer's own `main` is not the one that runs). Otherwise it replays the inputs
/// named on the command line (files or folders), so the target builds with the package and a
/// finding can be run under a debugger.
@main
struct FuzzCommand {
    static func main() {
        let target = FuzzTarget.current
        atexit { unlink(FuzzTarget.feedPath) }
        #if FUZZING
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput))
        #else
        for argument in CommandLine.arguments.dropFirst() {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder)
            let files = isFolder.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: argument)) ?? []).sorted().map { argument + "/" + $0 }
                : [argument]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                print("\(file): \(target.run(data))")
            }
        }
        #endif
    }
}
