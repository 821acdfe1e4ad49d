import Foundation

/// How a worker starts its children (`batchrun runner`, a folder item's `batchrun run`) and
/// talks to them: `posix_spawn` with the descriptors it hands over and nothing else, in a
/// process group of its own, and whole writes to a pipe.
///
/// ```swift
/// let pid = ChildProcess.spawn(["runner", "--worker", String(getpid())], log: nil, descriptors: [requests, statuses])
/// ```
package enum ChildProcess {
    /// The same open file as a descriptor above 4 (the old one closed).
    package static func moveAbove4(_ descriptor: Int32) -> Int32 {
        let moved = fcntl(descriptor, F_DUPFD_CLOEXEC, 5)
        guard moved >= 0 else { return descriptor }
        close(descriptor)
        return moved
    }

    package static func writeAll(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            written += count
        }
        return true
    }

    /// Starts `batchrun ARGUMENTS` in a process group of its own (a Ctrl-C reaches it once, from
    /// the worker), its output appended to `log` (else dropped), `descriptors` as its 3, 4, ...
    /// (a folder item's lock; a runner's requests and statuses).
    package static func spawn(_ arguments: [String], log: String?, descriptors: [Int32]) -> pid_t? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND | (log == nil ? 0 : O_NOFOLLOW), 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        for (offset, descriptor) in descriptors.enumerated() {
            posix_spawn_file_actions_adddup2(&actions, descriptor, 3 + Int32(offset))
        }
        // Nothing else of the worker's goes to the child: its store sessions' sockets (which
        // libraries may open without close-on-exec) would outlive a worker that died.
        _ = Self.addCloseFrom?(&actions, 3 + Int32(descriptors.count))
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGPIPE)   // ignored by the worker
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        // The running binary itself, not the path it was started from: after a package upgrade
        // replaced that file, a worker still starts runners of its own version (the kernel keeps
        // the old file while it runs), and the new binary is used once the worker is restarted.
        let result = posix_spawn(&pid, "/proc/self/exe", &actions, &attributes, argv, environ)
        return result == 0 ? pid : nil
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's
    /// Glibc module does not declare; nil where the C library has none.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// This program's own binary, as its children's `argv[0]` (what `ps` shows).
    package static let executable: String = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]
}
