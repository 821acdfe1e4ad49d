import Testing
@testable import BatchRunKit

/// The registry's bookkeeping of dead entries: swept once the dead are as many as the live,
/// never while every object lives (a large fetch registering its objects).
@Suite("Object registry")
struct ObjectRegistryTests {
    let entity = Entity(name: "Reading", columns: [Column(name: "id", type: .integer, isPrimaryKey: true)], primaryKey: ["id"])

    func object(_ id: Int) -> (ManagedObject, ObjectID) {
        let key = ObjectID(entity: "Reading", single: StoreValue(id))
        return (ManagedObject(entity: entity, values: [StoreValue(id)], snapshot: [StoreValue(id)], id: key), key)
    }

    @Test("200,000 live objects are kept without a sweep; the entries of objects let go are swept out as more are added")
    func deadEntriesAreSwept() {
        let registry = ObjectRegistry()
        var held: [ManagedObject] = []
        for id in 0..<200_000 {
            let (object, key) = object(id)
            registry.add(object, id: key)
            held.append(object)
        }
        #expect(registry.count == 200_000)
        #expect(registry.objects.count == 200_000)
        held.removeAll()   // every object dies: its entry is dead until a sweep
        #expect(registry.count == 200_000)
        #expect(registry.objects.isEmpty)
        let (survivor, key) = object(1_000_000)
        registry.add(survivor, id: key)
        #expect(registry.count == 1, "the dead outnumbered the live: the add swept them out")
        #expect(registry[key] === survivor)
    }

    @Test("a few dead among many live entries are not swept at every add")
    func fewDeadAreLeft() {
        let registry = ObjectRegistry()
        var held: [ManagedObject] = []
        for id in 0..<10_000 {
            let (object, key) = object(id)
            registry.add(object, id: key)
            held.append(object)
        }
        held.removeFirst(2_000)   // 2,000 die at once, 8,000 live
        let (late, key) = object(20_000)
        registry.add(late, id: key)
        #expect(registry.count == 10_001, "2,000 dead against 8,000 live: not worth a sweep yet")
        held.removeAll()
        let (last, lastKey) = object(20_001)
        registry.add(last, id: lastKey)
        #expect(registry.count == 2, "10,000 dead against 1 live: swept")
        withExtendedLifetime(late) {}
    }
}
