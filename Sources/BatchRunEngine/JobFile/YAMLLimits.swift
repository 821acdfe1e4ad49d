import CYaml

/// Bounds on a job file's size and shape, checked on LibYAML's events before Yams composes
/// anything, so a hostile file costs milliseconds and a few MB instead of gigabytes.
///
/// Yams resolves an alias to the anchored node itself; turning that into a `YAMLNode` copies it,
/// so twelve lines of nested aliases ("billion laughs") would become 10⁹ nodes. Here each
/// anchor's expanded size is known when its node ends, and an alias that would add more than
/// `maxAliasedNodes` nodes in all is refused where it is written.
///
/// ```swift
/// if let error = YAMLLimits.check(text) { print(error.line, error.column, error.message) }
/// ```
package enum YAMLLimits {
    /// A job file larger than this is refused unread (1 MiB: real job files are a few KB; a
    /// large data set belongs in a feed, which streams).
    static let maxFileBytes = 1 << 20
    /// Nodes that aliases may add to the document in all (a job file uses a handful).
    static let maxAliasedNodes = 10_000
    /// Mappings and sequences nested deeper than this are refused (the deepest a valid job
    /// file goes is 7: jobs, job, steps, step, insert, rows, row).
    static let maxDepth = 64

    package struct Violation: Error, Equatable {
        /// 1-based, like Yams' marks.
        package var line: Int
        package var column: Int
        package var message: String
    }

    /// The first bound the text breaks, or nil. A YAML syntax error is left to Yams to report.
    package static func check(_ text: String) -> Violation? {
        var text = text
        return text.withUTF8 { bytes in scan(bytes) }
    }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Violation? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { return nil }
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_input_string(&parser, bytes.baseAddress, bytes.count)

        /// An open mapping or sequence: its anchor, nodes so far (itself included), deepest child.
        struct Open { var anchor: String?; var nodes: Int; var height: Int }
        var open: [Open] = []
        var anchors: [String: (nodes: Int, height: Int)] = [:]
        var aliased = 0

        func ended(_ anchor: String?, nodes: Int, height: Int) {
            if let anchor { anchors[anchor] = (nodes, height) }
            if !open.isEmpty {
                open[open.count - 1].nodes += nodes
                open[open.count - 1].height = max(open[open.count - 1].height, height + 1)
            }
        }

        var event = yaml_event_t()
        while true {
            guard yaml_parser_parse(&parser, &event) == 1 else { return nil }
            defer { yaml_event_delete(&event) }
            let mark = event.start_mark
            let line = Int(mark.line) + 1, column = Int(mark.column) + 1
            switch event.type {
            case YAML_STREAM_END_EVENT:
                return nil
            case YAML_SCALAR_EVENT:
                ended(string(event.data.scalar.anchor), nodes: 1, height: 0)
            case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
                if open.count >= maxDepth {
                    return Violation(line: line, column: column,
                                     message: "nesting deeper than \(maxDepth) levels; a job file needs far fewer")
                }
                let anchor = event.type == YAML_SEQUENCE_START_EVENT
                    ? string(event.data.sequence_start.anchor) : string(event.data.mapping_start.anchor)
                open.append(Open(anchor: anchor, nodes: 1, height: 0))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                let node = open.removeLast()
                ended(node.anchor, nodes: node.nodes, height: node.height)
            case YAML_ALIAS_EVENT:
                let name = string(event.data.alias.anchor) ?? ""
                guard let target = anchors[name] else { return nil }   // Yams reports the undefined alias
                aliased += target.nodes
                if aliased > maxAliasedNodes {
                    return Violation(line: line, column: column,
                                     message: "alias *\(name) expands past the limit: aliases may add at most \(maxAliasedNodes) nodes to a job file")
                }
                if open.count + target.height > maxDepth {
                    return Violation(line: line, column: column,
                                     message: "alias *\(name) nests deeper than \(maxDepth) levels; a job file needs far fewer")
                }
                ended(nil, nodes: target.nodes, height: target.height)
            default:
                break
            }
        }
    }

    private static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: $0) }
    }
}
