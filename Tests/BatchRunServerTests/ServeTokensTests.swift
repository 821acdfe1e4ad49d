import BatchRunServer
import Foundation
import Testing

/// `serve --token-file`: the file's lines as an operator writes them.
@Suite("serve's token file")
struct ServeTokensTests {
    func tokens(_ text: String) throws -> ServeTokens {
        let path = NSTemporaryDirectory() + "/batchrun-tokens-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, 0o600) == 0)
        return try ServeTokens(contentsOf: path)
    }

    @Test("names found by their tokens: comments, blank lines, tabs and Windows line ends read; a wrong or cut token is no one")
    func lines() throws {
        let read = try tokens("# operators\r\n\r\nalice\t0123456789abcdef0123\r\n  bob   fedcba9876543210fedc  \r\n")
        #expect(read.name(of: "0123456789abcdef0123") == "alice")
        #expect(read.name(of: "fedcba9876543210fedc") == "bob")
        #expect(read.name(of: "0123456789abcdef012") == nil)
        #expect(read.name(of: "0123456789abcdef0123\r") == nil)
        #expect(read.name(of: "") == nil)
    }

    @Test("a file of no NAME TOKEN line, or with a name of other characters, is refused naming the line")
    func refused() throws {
        #expect(throws: ServeTokenFileError.self) { try tokens("# nothing\n\n") }
        let error = try #require(throws: ServeTokenFileError.self) { try tokens("\nal/ice 0123456789abcdef0123\n") }
        #expect(error.line == 2 && error.description.contains(":2:1: a name is letters"), "\(error)")
    }
}
