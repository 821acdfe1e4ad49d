import Foundation

/// A signed-in reader of the live page (`serve --actions`), kept in the server's memory under
/// the session cookie: who signed in, and the token each of its forms must carry (a page of
/// another site cannot read it, so it cannot post as this reader).
///
/// ```swift
/// let session = PageSession(who: "alice")
/// ```
package struct PageSession: Codable, Sendable, Equatable {
    package var who: String
    package var formToken: String

    package init(who: String) {
        self.who = who
        var generator = SystemRandomNumberGenerator()
        formToken = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
