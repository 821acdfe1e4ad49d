import BatchRunContext
import BatchRunStore

/// The rows one fetch read, for Core Data's batch faulting: the first time a to-one is walked
/// from one of its models, the rows it points at are read for all of them, in one statement
/// per entity, and held while the models are; a loop over the models then reads nothing more.
package final class FetchGroup {
    private struct Held {
        weak var object: ManagedObject?
    }

    private let objects: [Held]
    /// The rows read ahead, by the to-one's name: held, as the context holds rows weakly.
    private var readAhead: [String: [ManagedObject]] = [:]

    init(_ objects: [ManagedObject]) {
        self.objects = objects.map { Held(object: $0) }
    }

    /// Reads the rows the to-one `property` (its column at `column`) points at from every
    /// model of the group, once.
    func readAhead(_ property: String, column: Int, destination: String, core: ContextCore) throws {
        guard readAhead[property] == nil else { return }
        var keys = Set<StoreValue>()
        for held in objects {
            guard let object = held.object, object.values[column] != .null else { continue }
            keys.insert(object.values[column])
        }
        readAhead[property] = try core.existingObjects(with: keys.map { ObjectID(entity: destination, single: $0) }).compactMap { $0 }
    }
}
