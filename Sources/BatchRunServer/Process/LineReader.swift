import Foundation

/// Lines read from a descriptor, without their newlines; nil at its end (`batchrun runner`
/// reads its worker's requests with it).
package struct LineReader {
    let descriptor: Int32
    private var buffered: [UInt8] = []

    package init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    package mutating func next() -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffered[..<newline])
                buffered.removeSubrange(...newline)
                return line
            }
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            buffered += chunk[..<count]
        }
    }
}
