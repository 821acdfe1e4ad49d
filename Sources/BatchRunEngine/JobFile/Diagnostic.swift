import BatchRunStore

/// One error found in a job file, with where it is.
///
/// ```swift
/// let d = Diagnostic(at: location, "unknown key 'job'; did you mean 'jobs'?")
/// print(d.description)   // jobs/nightly.yaml:3:1: error: unknown key 'job'; did you mean 'jobs'?
/// ```
package struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    package var location: SourceLocation?
    package var message: String

    package init(at location: SourceLocation?, _ message: String) {
        self.location = location
        self.message = message
    }

    /// `FILE:LINE:COLUMN: error: MESSAGE`, or `error: MESSAGE` when the error has no place.
    package var description: String {
        if let location { return "\(location): error: \(message)" }
        return "error: \(message)"
    }

    /// The description, then the offending source line and a caret under the column.
    package func rendered(source: String?) -> String {
        rendered(line: location.flatMap { location in source.flatMap { Self.line(location.line, of: $0) } })
    }

    /// The description, then `line` (the offending source line) and a caret under the column.
    package func rendered(line: String?) -> String {
        guard let location, let line else { return description }
        let prefix = line.unicodeScalars.prefix(max(0, location.column - 1))
        // Keep tabs so the caret lines up under the same column in a terminal.
        let padding = String(String.UnicodeScalarView(prefix.map { $0 == "\t" ? "\t" : " " }))
        return "\(description)\n\(line)\n\(padding)^"
    }

    package static func line(_ number: Int, of source: String) -> String? {
        var current = 1
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == number {
                return line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
            }
            current += 1
        }
        return nil
    }
}

/// The job file (or files) could not be used; every error found is listed.
public struct JobFileError: BatchRunError {
    package var diagnostics: [Diagnostic]
    /// The text of each file, by path, so the errors can be shown with their lines.
    package var sources: [String: String]

    package init(diagnostics: [Diagnostic], sources: [String: String] = [:]) {
        self.diagnostics = diagnostics
        self.sources = sources
    }

    /// Every diagnostic with its line and caret, separated by blank lines.
    package var rendered: String {
        // Each source split once, not once per diagnostic (a hostile file can have 10⁵).
        let lines = sources.mapValues { $0.split(separator: "\n", omittingEmptySubsequences: false) }
        return diagnostics.map { diagnostic in
            let line = diagnostic.location.flatMap { location -> String? in
                guard let fileLines = lines[location.file], location.line >= 1, location.line <= fileLines.count else { return nil }
                let text = fileLines[location.line - 1]
                return String(text.hasSuffix("\r") ? text.dropLast() : text)
            }
            return diagnostic.rendered(line: line)
        }.joined(separator: "\n")
    }

    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }

    package var code: String { "jobfile.invalid" }
    /// The first error's message, and how many more there are.
    package var message: String {
        let first = diagnostics.first?.message ?? "the job file is invalid"
        return diagnostics.count > 1 ? "\(first) (and \(diagnostics.count - 1) more)" : first
    }
    /// Where the first error is.
    package var location: SourceLocation? { diagnostics.first?.location }
    package var isInvalid: Bool { true }
}
