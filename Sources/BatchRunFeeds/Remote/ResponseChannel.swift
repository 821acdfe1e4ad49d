#if NetworkFeeds
import Foundation
import NIOCore

/// Hands one HTTP response from the task that receives it to the feed's reader thread, which
/// reads synchronously: the head, then the body's chunks, then its end or failure. At most
/// `limit` bytes wait here: past them the receiving task waits for the reader (backpressure),
/// so memory does not grow with the feed however slow the import is.
final class ResponseChannel: @unchecked Sendable {
    // Safety: every stored `var` below is read and written only while `condition` is locked;
    // `limit` and `condition` are constants.
    package enum Event: Sendable {
        case head(status: Int, reason: String, headers: [(name: String, value: String)])
        case chunk(ByteBuffer)
        case end
        case failed(any Error)
    }

    private let condition = NSCondition()
    private let limit: Int
    private var events: [Event] = []
    private var first = 0
    private var buffered = 0
    private var waitingSender: CheckedContinuation<Bool, Never>?
    private var closed = false

    package init(limit: Int = 1 << 20) {
        self.limit = limit
    }

    /// Adds an event; a chunk waits while `limit` bytes wait already. False once the reader
    /// closed the channel: the sender stops.
    package func send(_ event: Event) async -> Bool {
        switch append(event) {
        case .closed: return false
        case .added: return true
        case .full: return await withCheckedContinuation { continuation in waitForRoom(continuation) }
        }
    }

    private enum Appended { case added, full, closed }

    private func append(_ event: Event) -> Appended {
        condition.lock()
        defer { condition.unlock() }
        guard !closed else { return .closed }
        events.append(event)
        condition.signal()
        guard case .chunk(let buffer) = event else { return .added }
        buffered += buffer.readableBytes
        return buffered >= limit ? .full : .added
    }

    /// Resumes `continuation` once the reader took enough (true) or closed the channel (false).
    private func waitForRoom(_ continuation: CheckedContinuation<Bool, Never>) {
        condition.lock()
        if closed || buffered < limit {
            let open = !closed
            condition.unlock()
            continuation.resume(returning: open)
        } else {
            waitingSender = continuation
            condition.unlock()
        }
    }

    /// The next event, waiting for it (the read timeout ends a silent response with `.failed`);
    /// nil when none came within `seconds`, so the reader can see whether to go on waiting.
    package func next(waitingAtMost seconds: Double) -> Event? {
        condition.lock()
        let deadline = Date().addingTimeInterval(seconds)
        while first == events.count {
            if !condition.wait(until: deadline) && first == events.count {
                condition.unlock()
                return nil
            }
        }
        let event = events[first]
        events[first] = .end
        first += 1
        if first == events.count || first > 256 {
            events.removeFirst(first)
            first = 0
        }
        if case .chunk(let buffer) = event { buffered -= buffer.readableBytes }
        var resumed: CheckedContinuation<Bool, Never>?
        if buffered < limit, let sender = waitingSender {
            waitingSender = nil
            resumed = sender
        }
        condition.unlock()
        resumed?.resume(returning: true)
        return event
    }

    /// The reader is done with this response: what waits is dropped and the sender stops.
    package func close() {
        condition.lock()
        closed = true
        events = []
        first = 0
        buffered = 0
        let sender = waitingSender
        waitingSender = nil
        condition.unlock()
        sender?.resume(returning: false)
    }
}
#endif
