import Foundation

/// A warning the library gives as it goes on working, on standard error as libpq gives its own
/// (`warning: password file "~/.pgpass" has group or world access ...`). The one place the
/// library writes to standard error: errors are thrown, never printed.
///
/// ```swift
/// Warning.emit("password file \"\(file)\" has group or world access; it is ignored")
/// ```
package enum Warning {
    package static func emit(_ message: String) {
        FileHandle.standardError.write(Data("warning: \(message)\n".utf8))
    }
}
