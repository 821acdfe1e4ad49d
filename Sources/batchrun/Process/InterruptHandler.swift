import BatchRunKit
import Foundation
import Synchronization

/// Ctrl-C and SIGTERM as JOBFILE.md section 7 says: the first cancels the run cleanly (jobs stop
/// at their next batch or have their statement interrupted, hooks run, the report is printed and
/// written); a second one stops the process at once. Either way the process then ends by
/// SIGINT, so a calling `make` stops too.
final class InterruptHandler: Sendable {
    private struct State {
        var signals = 0
        var run: JobFileRun?
    }

    private let state = Mutex(State())

    /// Takes over SIGINT and SIGTERM from their default actions; from its return on, none is lost.
    func install() {
        SignalWatcher.start([SIGINT, SIGTERM]) { [weak self] _ in self?.received() }
    }

    /// The run that a first signal cancels.
    func watch(_ run: JobFileRun?) {
        let cancelNow = state.withLock { state in
            state.run = run
            return state.signals > 0
        }
        if cancelNow { run?.cancel() }
    }

    var interrupted: Bool { state.withLock { $0.signals > 0 } }

    private func received() {
        let (count, run) = state.withLock { state in
            state.signals += 1
            return (state.signals, state.run)
        }
        if count == 1 {
            FileHandle.standardError.write(Data("\nbatchrun: interrupted; cancelling the run: running jobs stop after their current batch (nothing is half-written). Press Ctrl-C again to stop at once.\n".utf8))
            run?.cancel()
        } else {
            FileHandle.standardError.write(Data("batchrun: stopping at once\n".utf8))
            Self.endBySIGINT()
        }
    }

    /// Ends the process by SIGINT with the default action (status 130 to a shell), after
    /// `notice` on standard error when given.
    static func endBySIGINT(saying notice: String? = nil) -> Never {
        if let notice { FileHandle.standardError.write(Data("batchrun: \(notice)\n".utf8)) }
        signal(SIGINT, SIG_DFL)
        kill(getpid(), SIGINT)
        // Delivery is asynchronous; should it be blocked, exit with the same status.
        Backoff.wait(0.2)
        exit(ExitStatus.interrupted)
    }
}
