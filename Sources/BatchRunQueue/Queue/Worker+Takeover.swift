import BatchRunContext
import BatchRunEngine
import Foundation

extension Worker {
    /// The latest run of a taken-over item, rebuilt from the store, when it ended ok (the
    /// worker died before moving the item).
    func finishedEarlier(_ item: QueueItem) -> RunReport? {
        var loader = JobFileLoader(params: item.params)
        loader.baseDirectory = item.baseDirectory
        guard let file = try? item.load(with: loader),
              let store = try? Store(file.store, model: file.model),
              let report = try? JobFileRun.recordedReport(of: file, in: store), report.status == .ok else { return nil }
        return report
    }

    /// The run a kept report is of (decoded without its conflicts and jobs).
    private struct RecordedRun: Decodable {
        let runID: Int64?
        enum CodingKeys: String, CodingKey { case runID = "run_id" }
    }

    /// A finished item's report, when its process ended before writing it: rebuilt from the
    /// store's run state (its conflicts are not there), and said so in its log.
    func keepReport(_ report: RunReport, of item: QueueItem) {
        let path = item.reportPath
        // A report of this run is kept (one an earlier claim's run wrote is taken over); one left
        // by an earlier, cancelled attempt is replaced.
        for candidate in [path] + item.earlierReports.reversed() {
            guard let data = FileManager.default.contents(atPath: candidate),
                  let kept = try? JSONDecoder().decode(RecordedRun.self, from: data), kept.runID == report.runID else { continue }
            if candidate == path || rename(candidate, path) == 0 { return }
        }
        do {
            try report.writeJSON(to: path)
        } catch {
            say("cannot write the report of \(item.name): \(error.localizedDescription)")
            return
        }
        let note = "batchrun worker: run \(report.runID.map(String.init) ?? "?") had ended ok, but its process ended before "
            + "writing its report; the report was rebuilt from the store's run state (without its conflicts)\n"
        if let log = FileHandle(forWritingAtPath: item.logPath) ?? {
            _ = FileManager.default.createFile(atPath: item.logPath, contents: nil)
            return FileHandle(forWritingAtPath: item.logPath)
        }() {
            log.seekToEndOfFile()
            log.write(Data(note.utf8))
            try? log.close()
        }
    }
}
