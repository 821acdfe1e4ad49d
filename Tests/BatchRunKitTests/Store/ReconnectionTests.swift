import Testing
@testable import BatchRunKit

/// `Reconnection`'s pauses: a server back after a short restart is found within a tenth of a
/// second; one down for longer is tried at most twice a second.
@Suite("Reconnection")
struct ReconnectionTests {
    @Test("every 0.1 s for the first 5 s of a loss, then doubling up to 0.5 s")
    func pauses() {
        var pause = 0.0
        var lostFor = 0.0
        var tries: [(lostFor: Double, pause: Double)] = []
        while lostFor < 8 {
            pause = Reconnection.pause(lostFor: lostFor, previous: pause)
            tries.append((lostFor, pause))
            lostFor += pause
        }
        #expect(tries.filter { $0.lostFor < 5 }.allSatisfy { $0.pause == 0.1 }, "\(tries)")
        #expect(tries.filter { $0.lostFor >= 5 }.prefix(4).map(\.pause) == [0.2, 0.4, 0.5, 0.5], "\(tries)")
        #expect(tries.allSatisfy { $0.pause <= Reconnection.longestPause })
    }

    @Test("a server back 3 s after the loss is tried within 0.1 s of its return")
    func shortRestart() {
        var pause = 0.0, at = 0.0
        while at < 3 {
            pause = Reconnection.pause(lostFor: at, previous: pause)
            at += pause
        }
        #expect(at - 3 <= 0.1 + 1e-9, "first try after the return at \(at) s")
    }
}
