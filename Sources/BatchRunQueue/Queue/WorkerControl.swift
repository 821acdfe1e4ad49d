import Foundation

/// Wakes or stops a running `Worker` from any thread (a signal handler's thread, another task):
/// it writes a byte to the worker's wake pipe, which its loop reads.
///
/// ```swift
/// let control = worker.control
/// SignalWatcher.start([SIGINT, SIGTERM]) { _ in control.stop() }
/// ```
public struct WorkerControl: Sendable {
    let pipe: WakePipe

    static let wakeByte: UInt8 = 1
    static let stopByte: UInt8 = 2

    /// Has the worker look again now: a run ended, an item may have arrived.
    public func wake() { send(Self.wakeByte) }

    /// Stops the worker (as SIGINT or SIGTERM does to `batchrun worker`): no new items; running
    /// ones are asked to stop and go back to pending; `run()` returns `ExitStatus.interrupted`.
    public func stop() { send(Self.stopByte) }

    private func send(_ byte: UInt8) {
        var byte = byte
        _ = write(pipe.write, &byte, 1)
    }
}
