import BatchRunStore
import Foundation

/// Pausing a queue folder (`batchrun pause`, JOBFILE.md 18): the file `paused` in the queue
/// folder pauses it whole, `limits/GROUP.paused` one group. A worker looks for them at each
/// claim (it claims at least every quarter of a second), so nothing new starts within a second.
extension QueueFolder {
    var pauseFile: String { path + "/paused" }

    func groupPauseFile(_ group: String) -> String { limitsFolder + "/\(group).paused" }

    package func setPaused(_ paused: Bool, group: String?) throws {
        let file = group.map(groupPauseFile) ?? pauseFile
        guard paused else {
            guard unlink(file) == 0 || errno == ENOENT else { throw FileAccessError(.write, path: file, errno: errno) }
            return
        }
        if group != nil { try FileManager.default.createDirectory(atPath: limitsFolder, withIntermediateDirectories: true) }
        let descriptor = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FileAccessError(.write, path: file, errno: errno) }
        close(descriptor)
    }

    package func pause() throws -> QueuePause {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: limitsFolder)) ?? []
        let groups = names.filter { $0.hasSuffix(".paused") && !$0.hasPrefix(".") }.map { String($0.dropLast(".paused".count)) }.sorted()
        return QueuePause(queue: FileManager.default.fileExists(atPath: pauseFile), groups: groups)
    }
}
