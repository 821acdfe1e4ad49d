import BatchRunKit
import Foundation

// Five scenarios a SwiftData user tries first, written with @Model and #Filter: delete rules,
// 100,000 inserts saved every 10,000, a sorted, filtered fetch in pages, live results on the
// main context while a private context saves, and conflicts. Each check prints "ok: ..." or
// ends the program with status 1.

func check(_ condition: Bool, _ what: String) {
    guard condition else {
        print("FAILED: \(what)")
        exit(1)
    }
    print("ok: \(what)")
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("airline-models-\(getpid())")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
let model = try Model(Airline.self, Flight.self, Pilot.self, Lounge.self, columnNames: .snakeCase)
let store = try Store(path: folder.appendingPathComponent("air.sqlite").path, model: model)
let noon = Date(timeIntervalSince1970: 1_769_860_800)
let ops = Context(store: store, name: "ops")

// 1. Cascade, nullify and deny, declared on the to-many side as SwiftData declares them.
try await ops.perform { context in
    let united = Airline(id: 1, name: "UA"), ada = Pilot(id: 1, name: "Ada")
    let flight = Flight(id: 1, number: "UA1", departs: noon, airline: united)
    flight.captain = ada
    try context.insert(flight)                        // its airline and pilot too
    try context.insert(Lounge(id: 1, airline: united))
    try context.save()
    check(united.flights.map(\.number) == ["UA1"] && flight.captain?.name == "Ada", "relationships walk both ways")
    context.delete(ada)
    var denied = false
    do { try context.save() } catch ContextError.deleteDenied { denied = true }
    check(denied, "deny: a pilot with flights is not deleted")
    context.rollback()
    context.delete(united)
    try context.save()
    check(try context.fetch(FetchDescriptor<Flight>()).isEmpty, "cascade: the airline's flights went with it")
    check(try context.fetch(FetchDescriptor<Lounge>()).first?.airline == nil, "nullify: the lounge stays, pointing nowhere")
}

// 2. 100,000 flights, saved every 10,000.
let started = Date()
try await ops.perform { context in
    let airlines = (1...10).map { Airline(id: 100 + $0, name: "A\($0)") }
    for airline in airlines { try context.insert(airline) }
    for id in 1...100_000 {
        try context.insert(Flight(id: 1_000 + id, number: "F\(id)", departs: noon.addingTimeInterval(Double(id) * 60), airline: airlines[id % 10]))
        if id % 10_000 == 0 { try context.save() }
    }
}
let seconds = Date().timeIntervalSince(started)
print(String(format: "100,000 flights in %.2f s (%.0f a second)", seconds, 100_000 / seconds))
check(try await ops.perform { try $0.count(FetchRequest(entity: "Flight")) } == 100_000, "100,000 flights saved")

// 3. A sorted, filtered fetch, 1,000 at a time by key.
_ = try await ops.perform { try $0.execute(BatchUpdateRequest(entity: "Flight", set: ["delay": "id % 60"])) }
var seen = 0, last = 0
repeat {
    let after = last
    let page = try await ops.perform { context in
        try context.fetch(FetchDescriptor(filter: #Filter<Flight> { $0.id > after && $0.delay! >= 30 && $0.airline?.name == "A3" },
                                          sortBy: [ModelSort(\.id)], fetchLimit: 1_000)).map(\.id)
    }
    seen += page.count
    last = page.last ?? last
    if page.count < 1_000 { break }
} while true
let expected = (1...100_000).filter { $0 % 10 == 3 && (1_000 + $0) % 60 >= 30 }.count
check(seen == expected, "a filtered fetch through a relationship in pages: \(seen) flights of A3 delayed 30 or more")

// 4. Live results on the main context while a private context saves.
do {
    let main = MainContext(store: store)
    var updates = main.results(for: FetchRequest(entity: "Flight", where: "delay >= 59.5")).makeAsyncIterator()
    let before = try await updates.next()
    try await ops.perform { context in
        try context.fetch(FetchDescriptor(filter: #Filter<Flight> { $0.number == "F7" }))[0].delay = 75
        try context.save()
    }
    let after = try await updates.next()
    check(before?.items.count == 0 && after?.items.count == 1 && after?.change.inserted == [0], "live results: the flight the private context delayed appears")
}

// 5. Conflicts: different columns are both kept; the same column under .error is refused.
let ua = FetchDescriptor(filter: #Filter<Flight> { $0.number == "F7" })
let crew = Context(store: store, name: "crew")
try await ops.perform { context in try context.fetch(ua)[0].delay = 80 }
try await crew.perform { context in
    try context.fetch(ua)[0].departs = noon
    try context.save()
}
try await ops.perform { context in _ = try context.save() }
let row = try await crew.perform { context in try context.fetch(ua).map { "\($0.delay ?? 0) \($0.departs == noon)" } }
check(row == ["80.0 true"], "changes to different columns by two contexts: both kept")
try await ops.perform { context in try context.fetch(ua)[0].delay = 1 }
try await crew.perform { context in
    try context.fetch(ua)[0].delay = 2
    try context.save()
}
try await ops.perform { context in
    do {
        try context.save()
        check(false, "the same column changed by two contexts is a conflict")
    } catch let error as MergeConflictError {
        check(error.conflict.properties.map(\.name) == ["delay"], "the same column changed by two contexts: a conflict naming delay")
    }
}
