import BatchRunKit
import Foundation

/// `serve --actions --token-file FILE`: who may act on the live page. One `NAME TOKEN` a line
/// (blank lines and lines starting with `#` skipped); the name is who acted, in the audit log.
/// The file must not be readable by others (`chmod 600`), a token is at least 16 characters,
/// and no name or token is given twice.
///
/// ```swift
/// let tokens = try ServeTokens(contentsOf: "/etc/batchrun/operators")
/// tokens.name(of: "3f9c2a7e8d1b4c6a")   // "alice", or nil
/// ```
package struct ServeTokens: Sendable {
    private let entries: [(name: String, token: [UInt8])]

    /// The shortest token taken: shorter ones are guessed too easily.
    package static let shortestToken = 16

    package init(contentsOf path: String) throws {
        var status = stat()
        guard stat(path, &status) == 0, let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ServeTokenFileError(file: path, line: nil, reason: "cannot be read (it holds the page's tokens: one NAME TOKEN a line)")
        }
        guard status.st_mode & 0o077 == 0 else {
            throw ServeTokenFileError(file: path, line: nil, reason: String(format: "may be read by others (mode %o): its tokens act on the queue; chmod 600 it", status.st_mode & 0o777))
        }
        var entries: [(name: String, token: [UInt8])] = []
        // `isNewline`: a file written on Windows ends its lines with "\r\n", one Character to Swift.
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            let at = index + 1
            guard fields.count == 2 else {
                throw ServeTokenFileError(file: path, line: at, reason: "expected NAME TOKEN, found \(fields.count) field\(fields.count == 1 ? "" : "s")")
            }
            let name = String(fields[0]), token = String(fields[1])
            guard name.count <= 64, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.@".contains($0)) }) else {
                throw ServeTokenFileError(file: path, line: at, reason: "a name is letters, digits, '-', '_', '.' and '@' (at most 64), found '\(name)'")
            }
            guard token.count >= Self.shortestToken else {
                throw ServeTokenFileError(file: path, line: at, reason: "the token of \(name) is \(token.count) characters: at least \(Self.shortestToken) (e.g. `openssl rand -hex 16`)")
            }
            if entries.contains(where: { $0.name == name }) { throw ServeTokenFileError(file: path, line: at, reason: "\(name) is named twice") }
            if entries.contains(where: { $0.token == Array(token.utf8) }) { throw ServeTokenFileError(file: path, line: at, reason: "the token of \(name) is given twice") }
            entries.append((name, Array(token.utf8)))
        }
        guard !entries.isEmpty else { throw ServeTokenFileError(file: path, line: nil, reason: "holds no NAME TOKEN line") }
        self.entries = entries
    }

    /// The name of `token`, or nil. Every token is compared in full, in time that does not
    /// depend on where a guess goes wrong.
    package func name(of token: String) -> String? {
        let given = Array(token.utf8)
        var found: String?
        for entry in entries where Self.same(entry.token, given) { found = entry.name }
        return found
    }

    static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }
}
