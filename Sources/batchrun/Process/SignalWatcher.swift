import Foundation
import Synchronization

/// The write end of the pipe the signal handler writes to; -1 until `SignalWatcher.start`.
private let signalPipe = Atomic<Int32>(-1)

/// Delivers signals to a closure, on a thread of its own, from the moment `start` returns: a
/// `sigaction` handler writes the signal's number to a pipe (all it does, and async-signal-safe)
/// and the thread reads it.
///
/// Not a dispatch source: one needs the signal ignored first, and a signal that arrives before
/// the source is armed (libdispatch arms it on another thread, later) is lost. A Ctrl-C in a
/// run's first milliseconds was, and the run went on to its end.
///
/// ```swift
/// SignalWatcher.start([SIGINT, SIGTERM]) { number in print("got signal \(number)") }
/// ```
enum SignalWatcher {
    /// Takes over `numbers` from their default actions. Once per process.
    static func start(_ numbers: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return }   // no descriptors left: signals keep their default actions
        for descriptor in fds { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }   // not inherited by children
        let readEnd = fds[0]
        signalPipe.store(fds[1], ordering: .sequentiallyConsistent)
        Thread.detachNewThread {
            var number: Int32 = 0
            while true {
                let count = read(readEnd, &number, MemoryLayout<Int32>.size)
                if count == MemoryLayout<Int32>.size {
                    handler(number)
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
        // A parent may have started us with these blocked (a test runner's thread): unblock
        // them on this thread, which every later thread takes its mask from.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for number in numbers { sigaddset(&unblocked, number) }
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        for number in numbers {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                let saved = errno
                var value = number
                _ = write(signalPipe.load(ordering: .relaxed), &value, MemoryLayout<Int32>.size)   // under PIPE_BUF: atomic
                errno = saved
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
    }
}
