import ArgumentParser
import Foundation

enum ColorMode: String, ExpressibleByArgument, CaseIterable, Sendable {
    case auto, always, never
}

/// Colours for status words, on when asked or when standard output is a terminal without NO_COLOR.
struct TerminalStyle: Sendable {
    let colored: Bool
    let isTerminal: Bool

    init(mode: ColorMode, environment: [String: String] = ProcessInfo.processInfo.environment) {
        isTerminal = isatty(STDOUT_FILENO) == 1
        switch mode {
        case .always: colored = true
        case .never: colored = false
        case .auto: colored = isTerminal && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
        }
    }

    func paint(_ text: String, _ code: String) -> String {
        colored ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    func green(_ text: String) -> String { paint(text, "32") }
    func red(_ text: String) -> String { paint(text, "31") }
    func yellow(_ text: String) -> String { paint(text, "33") }
    func dim(_ text: String) -> String { paint(text, "2") }
}
