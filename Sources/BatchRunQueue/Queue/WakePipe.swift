import Foundation

/// A worker's wake pipe: non-blocking and close-on-exec, closed when neither the worker nor
/// any `WorkerControl` holds it any more (so a late wake never writes to a reused descriptor).
///
/// ```swift
/// let pipe = WakePipe()
/// var byte: UInt8 = 1
/// _ = write(pipe.write, &byte, 1)
/// ```
final class WakePipe: Sendable {
    package let read: Int32
    package let write: Int32

    package init() {
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for descriptor in fds where descriptor >= 0 {
            _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        (read, write) = (fds[0], fds[1])
    }

    deinit {
        close(read)
        close(write)
    }
}
