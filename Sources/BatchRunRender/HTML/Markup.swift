/// Builds well-formed, XHTML-compatible markup (HTML and inline SVG). Every text and attribute
/// value is escaped on the way in, so a value from a job file, a feed or the store (a job
/// name, an error, a conflict value containing `<script>`) always shows as text.
///
/// ```swift
/// var markup = Markup()
/// markup.element("p", ["class": "note"]) { $0.text("5 < 6") }   // <p class="note">5 &lt; 6</p>
/// ```
package struct Markup {
    package private(set) var output = ""

    package init() {}

    /// An element with content built by `content`.
    package mutating func element(_ tag: String, _ attributes: KeyValuePairs<String, String> = [:],
                          _ content: (inout Markup) -> Void) {
        open(tag, attributes)
        content(&self)
        output += "</\(tag)>"
    }

    /// An element holding one text.
    package mutating func element(_ tag: String, _ attributes: KeyValuePairs<String, String> = [:], text: String) {
        open(tag, attributes)
        output += Self.escape(text)
        output += "</\(tag)>"
    }

    /// An element without content, written self-closed (`<rect .../>`).
    package mutating func empty(_ tag: String, _ attributes: KeyValuePairs<String, String> = [:]) {
        output += "<\(tag)\(Self.attributes(attributes))/>"
    }

    package mutating func text(_ value: String) {
        output += Self.escape(value)
    }

    /// Markup built by this program (never a value from outside it).
    package mutating func trusted(_ markup: String) {
        output += markup
    }

    package mutating func newline() {
        output += "\n"
    }

    private mutating func open(_ tag: String, _ attributes: KeyValuePairs<String, String>) {
        output += "<\(tag)\(Self.attributes(attributes))>"
    }

    private static func attributes(_ attributes: KeyValuePairs<String, String>) -> String {
        attributes.map { " \($0.key)=\"\(escape($0.value))\"" }.joined()
    }

    /// Escapes `& < > " '`, and replaces control characters that XML does not allow.
    package static func escape(_ value: String) -> String {
        var result = ""
        result.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            case "\t", "\n", "\r": result.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value):
                result += "\u{FFFD}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
