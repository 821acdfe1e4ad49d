import Foundation

/// How long to wait before each new try of work that failed, and the one blocking wait of the
/// library: synchronous (retries run on worker threads), and cut short once `until` says so,
/// which it asks every `checkInterval` (0.05 s), so a Ctrl-C is seen within a tenth of a second.
///
/// A delay is fixed, grows linearly or doubles with each retry; given as a range, each delay
/// is drawn from it (jitter), so that two workers that failed together do not try together again.
///
/// ```swift
/// let backoff = Backoff.exponential(0.2)           // 0.2 s, 0.4 s, 0.8 s, ...
/// backoff.delay(before: 3)                         // 0.8
/// guard backoff.wait(before: attempt, until: isCancelled) else { throw error }   // cancelled meanwhile
/// Backoff.wait(0.5, until: { ended.isMarked })     // half a second, or less once the transaction ended
/// ```
package struct Backoff: Sendable {
    /// How the delay grows from one retry to the next.
    package enum Growth: Sendable {
        /// The same delay before every retry.
        case fixed
        /// The first delay times the retry's number: 1x, 2x, 3x, ...
        case linear
        /// The first delay doubled at each retry: 1x, 2x, 4x, ...
        case exponential
    }

    /// The delay before the first retry in seconds, or the range it is drawn from.
    package let first: ClosedRange<Double>
    package let growth: Growth
    /// No delay is longer (seconds).
    package let longest: Double

    package init(first: ClosedRange<Double>, growth: Growth, longest: Double = .infinity) {
        self.first = first
        self.growth = growth
        self.longest = longest
    }

    package static func fixed(_ seconds: Double) -> Backoff { Backoff(first: seconds...seconds, growth: .fixed) }
    package static func fixed(_ seconds: ClosedRange<Double>) -> Backoff { Backoff(first: seconds, growth: .fixed) }
    package static func linear(_ seconds: Double) -> Backoff { Backoff(first: seconds...seconds, growth: .linear) }
    package static func linear(_ seconds: ClosedRange<Double>) -> Backoff { Backoff(first: seconds, growth: .linear) }
    package static func exponential(_ seconds: Double, longest: Double = .infinity) -> Backoff {
        Backoff(first: seconds...seconds, growth: .exponential, longest: longest)
    }

    /// The delay before retry `retry` (1 for the first retry), in seconds: a value drawn from
    /// `first`, grown as `growth` says, at most `longest`.
    package func delay(before retry: Int) -> Double {
        let retry = max(1, retry)
        let factor: Double = switch growth {
        case .fixed: 1
        case .linear: Double(retry)
        case .exponential: pow(2, Double(retry - 1))
        }
        let base = first.lowerBound == first.upperBound ? first.lowerBound : Double.random(in: first)
        return min(longest, base * factor)
    }

    /// Waits `delay(before: retry)`, or less once `until` returns true (see `wait(_:until:)`).
    /// True when the whole delay passed.
    @discardableResult
    package func wait(before retry: Int = 1, until stop: () -> Bool = { false }) -> Bool {
        Self.wait(delay(before: retry), until: stop)
    }

    /// How often a wait asks its `until` (seconds).
    package static let checkInterval = 0.05

    /// Blocks this thread for `seconds`, or less once `stop` returns true: it is asked first, and
    /// again every `checkInterval`. True when the whole time passed; false when `stop` ended it.
    @discardableResult
    package static func wait(_ seconds: Double, until stop: () -> Bool = { false }) -> Bool {
        let end = ProcessInfo.processInfo.systemUptime + max(0, seconds)
        while true {
            if stop() { return false }
            let left = end - ProcessInfo.processInfo.systemUptime
            if left <= 0 { return true }
            // The library's one blocking sleep (ArchitectureTests counts them).
            Thread.sleep(forTimeInterval: min(left, checkInterval))
        }
    }
}
