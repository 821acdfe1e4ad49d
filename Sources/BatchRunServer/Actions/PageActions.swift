/// What the live page offers the one who reads it (`serve --actions`): nothing, a sign-in
/// form, or a form per action, each carrying the session's form token (checked with every POST).
///
/// ```swift
/// let html = LiveQueuePage.page(snapshot, rates: [:], nonce: "n0nce", actions: .signedIn(who: "alice", formToken: "9f2c..."))
/// ```
package enum PageActions: Sendable, Equatable {
    /// `serve` without `--actions`: read-only, no forms.
    case none
    /// Actions are on and the reader has not signed in: a sign-in form, nothing else.
    case signIn
    /// Signed in as `who`: cancel, retry, pause and resume, run a schedule now, sign out.
    case signedIn(who: String, formToken: String)

    /// The session's form token when signed in.
    var formToken: String? {
        if case .signedIn(_, let token) = self { token } else { nil }
    }
}
