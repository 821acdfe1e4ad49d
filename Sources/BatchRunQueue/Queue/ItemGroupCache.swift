import Foundation
import Synchronization

/// The group of each pending item a `QueueFolder` value looked at, by name (an item's text does
/// not change while it keeps its name), so that a claim that passes over many items of a
/// paused or limited group reads each one's first lines once, not at every claim.
final class ItemGroupCache: Sendable {
    private let groups = Mutex<[String: String]>([:])
    /// Past this many names the cache starts again (items claimed elsewhere leave theirs behind).
    private static let capacity = 100_000

    /// The group of the item at `path` named `name` ("" for none).
    func group(of name: String, at path: String) -> String? {
        if let known = groups.withLock({ $0[name] }) { return known.isEmpty ? nil : known }
        let group = QueueFolder.group(ofItemAt: path)
        groups.withLock { groups in
            if groups.count >= Self.capacity { groups.removeAll() }
            groups[name] = group ?? ""
        }
        return group
    }

    func forget(_ name: String) {
        _ = groups.withLock { $0.removeValue(forKey: name) }
    }
}
