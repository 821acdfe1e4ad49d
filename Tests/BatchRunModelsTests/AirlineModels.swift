import BatchRunKit
import BatchRunModels
import Foundation

// The model of issue 49 as SwiftData users write it: airlines, flights, pilots and lounges,
// with cascade, nullify and deny (docs/library.md shows it beside SwiftData's).
@Model final class Airline {
    @Key var id: Int
    @Unique var name: String
    @Relationship(deleteRule: .cascade, inverse: \Flight.airline) var flights: [Flight]
    @Relationship(deleteRule: .nullify, inverse: \Lounge.airline) var lounges: [Lounge]
    init(id: Int, name: String) { self.id = id; self.name = name }
}

@Model final class Flight {
    @Key var id: Int?
    @Unique var number: String
    var delay: Double?
    @Index var departs: Date
    var seats: Int = 180
    var cancelled: Bool = false
    var airline: Airline?
    var captain: Pilot?
    init(number: String, departs: Date, airline: Airline? = nil) { self.number = number; self.departs = departs; self.airline = airline }
}

@Model final class Pilot {
    @Key var id: Int
    var name: String
    @Relationship(deleteRule: .deny, inverse: \Flight.captain) var flights: [Flight]
    init(id: Int, name: String) { self.id = id; self.name = name }
}

@Model final class Lounge {
    @Key var id: Int
    var airline: Airline?
    init(id: Int, airline: Airline?) { self.id = id; self.airline = airline }
}

/// A to-one to its own kind: cycles (`a.manager = b`, `b.manager = a`) and a model pointing at itself.
@Model final class Employee {
    @Key var id: Int
    var name: String
    var manager: Employee?
    var lastFlight: Flight?
    init(id: Int, name: String) { self.id = id; self.name = name }
}
