import Foundation

/// A small tmpfs mounted for one test (we are root here and in CI), unmounted when released.
/// `TmpfsMount.refusal` says why mounting is not possible, for tests to skip with that reason.
final class TmpfsMount {
    let url: URL
    private var mounted = true

    init(size: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-tmpfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        if let failure = Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", url.path]) {
            try? FileManager.default.removeItem(at: url)
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: failure])
        }
    }

    deinit { unmount() }

    func path(_ relative: String) -> String { url.appendingPathComponent(relative).path }

    /// `mount -o remount,ro` (or `rw`).
    func remount(readOnly: Bool) throws {
        if let failure = Self.run("/bin/mount", ["-o", "remount,\(readOnly ? "ro" : "rw")", url.path]) {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSLocalizedDescriptionKey: failure])
        }
    }

    func unmount() {
        guard mounted else { return }
        mounted = false
        _ = Self.run("/bin/umount", [url.path])
        try? FileManager.default.removeItem(at: url)
    }

    /// Nil when a tmpfs can be mounted here, else why not (printed by the tests that skip).
    static let refusal: String? = {
        do {
            _ = try TmpfsMount(size: "1m")
            return nil
        } catch {
            let reason = "skipped: mounting a tmpfs was refused (\(error.localizedDescription))"
            print(reason)
            return reason
        }
    }()

    /// Runs a command; nil when it succeeded, else its error output.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        do { try process.run() } catch { return "\(executable): \(error)" }
        let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return process.terminationStatus == 0 ? nil : "\(executable) \(arguments.joined(separator: " ")): \(output)"
    }
}
