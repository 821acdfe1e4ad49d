import Foundation

/// Colours for status words, on when asked or when standard output is a terminal without NO_COLOR.
package struct TerminalStyle: Sendable {
    package let colored: Bool
    package let isTerminal: Bool

    package init(mode: ColorMode, environment: [String: String] = ProcessInfo.processInfo.environment) {
        isTerminal = isatty(STDOUT_FILENO) == 1
        switch mode {
        case .always: colored = true
        case .never: colored = false
        case .auto: colored = isTerminal && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
        }
    }

    package func paint(_ text: String, _ code: String) -> String {
        colored ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    package func green(_ text: String) -> String { paint(text, "32") }
    package func red(_ text: String) -> String { paint(text, "31") }
    package func yellow(_ text: String) -> String { paint(text, "33") }
    package func dim(_ text: String) -> String { paint(text, "2") }
}
