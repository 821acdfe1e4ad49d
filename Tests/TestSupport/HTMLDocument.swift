import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An HTML report parsed as XML (the report is well-formed, XHTML-compatible markup): a tree
/// of elements with their attributes and text, for tests to query.
package final class HTMLDocument {
    package final class Element {
        package let name: String
        package let attributes: [String: String]
        package var children: [Element] = []
        /// Text and child text in document order.
        package var text = ""
        weak var parent: Element?

        package init(name: String, attributes: [String: String]) {
            self.name = name
            self.attributes = attributes
        }

        /// This element and every element below it, in document order.
        package var all: [Element] { [self] + children.flatMap(\.all) }

        package func elements(_ name: String) -> [Element] { all.filter { $0.name == name } }

        /// The elements below with this class among their classes.
        package func elements(class name: String) -> [Element] {
            all.filter { ($0.attributes["class"] ?? "").split(separator: " ").contains(Substring(name)) }
        }
    }

    package struct ParseError: Error, CustomStringConvertible {
        package var description: String
    }

    package let root: Element

    /// Parses `markup`; throws with the parser's error and line when it is not well-formed.
    package init(_ markup: String) throws {
        let builder = Builder()
        let parser = XMLParser(data: Data(markup.utf8))
        parser.delegate = builder
        guard parser.parse(), let root = builder.root else {
            throw ParseError(description: "not well-formed at line \(parser.lineNumber): \(parser.parserError.map { "\($0)" } ?? "?")")
        }
        self.root = root
    }

    package func elements(_ name: String) -> [Element] { root.elements(name) }
    package func elements(class name: String) -> [Element] { root.elements(class: name) }

    private final class Builder: NSObject, XMLParserDelegate {
        var root: Element?
        var stack: [Element] = []

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            let element = Element(name: name, attributes: attributes)
            element.parent = stack.last
            stack.last?.children.append(element)
            if root == nil { root = element }
            stack.append(element)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            stack.removeLast()
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            for element in stack { element.text += string }
        }
    }
}
