import Foundation
import Synchronization
import Testing
@testable import BatchRunKit

/// `Backoff`: the delays it computes before each retry, and its wait, which lasts its delay
/// unless its `until` says stop, and then ends within a check interval. The times are bounded
/// generously: the tests run on a busy two-core machine.
@Suite("Backoff")
struct BackoffTests {
    @Test("fixed, linear and exponential delays; exponential ones no longer than `longest`")
    func delays() {
        #expect((1...4).map { Backoff.fixed(0.05).delay(before: $0) } == [0.05, 0.05, 0.05, 0.05])
        #expect((1...4).map { Backoff.linear(0.05).delay(before: $0) } == [0.05, 0.1, 0.15000000000000002, 0.2])
        #expect((1...4).map { Backoff.exponential(0.2).delay(before: $0) } == [0.2, 0.4, 0.8, 1.6])
        #expect((1...5).map { Backoff.exponential(0.1, longest: 0.5).delay(before: $0) } == [0.1, 0.2, 0.4, 0.5, 0.5])
        #expect(Backoff.exponential(0.2).delay(before: 2_000) == .infinity)
        #expect(Backoff.exponential(0.2, longest: 30).delay(before: 2_000) == 30)
        // Retry 0 (or less) is taken as the first.
        #expect(Backoff.linear(0.05).delay(before: 0) == 0.05)
    }

    @Test("a delay given as a range is drawn from it at each retry (jitter), grown as the backoff grows")
    func jitteredDelays() {
        let fixed = (0..<200).map { _ in Backoff.fixed(0.005...0.05).delay(before: 7) }
        #expect(fixed.allSatisfy { (0.005...0.05).contains($0) }, "\(fixed)")
        #expect(Set(fixed).count > 100, "not drawn at each retry: \(Set(fixed).count) values")
        let linear = (0..<200).map { _ in Backoff.linear(0.01...0.05).delay(before: 3) }
        #expect(linear.allSatisfy { (0.03...0.15).contains($0) }, "\(linear)")
        #expect(linear.min()! < 0.06 && linear.max()! > 0.12, "the range is not covered: \(linear.min()!)...\(linear.max()!)")
        let exponential = (0..<200).map { _ in Backoff(first: 0.1...0.3, growth: .exponential).delay(before: 3) }
        #expect(exponential.allSatisfy { (0.4...1.2).contains($0) }, "\(exponential)")
    }

    @Test("a wait lasts its delay when nothing stops it")
    func waitsItsDelay() {
        let started = ProcessInfo.processInfo.systemUptime
        #expect(Backoff.wait(0.3))
        let waited = ProcessInfo.processInfo.systemUptime - started
        #expect(waited >= 0.3 && waited < 3, "waited \(waited) s")

        let before = ProcessInfo.processInfo.systemUptime
        #expect(Backoff.fixed(0.2).wait(before: 1, until: { false }))
        let fixed = ProcessInfo.processInfo.systemUptime - before
        #expect(fixed >= 0.2 && fixed < 3, "waited \(fixed) s")
    }

    @Test("a wait of 10 s ends well before, once another thread signals cancellation")
    func endsOnceCancelled() {
        let cancelled = Flag()
        let started = ProcessInfo.processInfo.systemUptime
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.2)
            cancelled.raise()
        }
        let waitedWhole = Backoff.wait(10, until: { cancelled.isRaised })
        let waited = ProcessInfo.processInfo.systemUptime - started
        let seen = cancelled.isRaised
        #expect(!waitedWhole && seen)
        #expect(waited >= 0.2 && waited < 2, "waited \(waited) s for a cancel signalled after 0.2 s")
    }

    @Test("a wait whose cancellation was signalled before it began does not wait")
    func cancelledBefore() {
        let started = ProcessInfo.processInfo.systemUptime
        #expect(!Backoff.exponential(5).wait(before: 3, until: { true }))
        #expect(!Backoff.wait(.infinity, until: { true }))
        let waited = ProcessInfo.processInfo.systemUptime - started
        #expect(waited < 1, "waited \(waited) s")
    }

    @Test("a wait asks its `until` about every 0.05 s")
    func asksOften() {
        var asked = 0
        #expect(Backoff.wait(0.5, until: { asked += 1; return false }))
        // 0.5 s / 0.05 s: about 11 (first, and after each check interval); a slow machine asks fewer times, never more.
        #expect(asked >= 3 && asked <= 12, "asked \(asked) times in 0.5 s")
    }

    /// A flag another thread raises.
    final class Flag: Sendable {
        private let raised = Atomic<Bool>(false)
        var isRaised: Bool { raised.load(ordering: .acquiring) }
        func raise() { raised.store(true, ordering: .releasing) }
    }
}
