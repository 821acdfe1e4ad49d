import BatchRunKit
import Foundation

// The model: 27 lines, as SwiftData writes it (docs/library.md shows both side by side).
@Model final class Airline {
    @Key var id: Int
    @Unique var name: String
    @Relationship(deleteRule: .cascade, inverse: \Flight.airline) var flights: [Flight]
    @Relationship(deleteRule: .nullify, inverse: \Lounge.airline) var lounges: [Lounge]
    init(id: Int, name: String) { self.id = id; self.name = name }
}
@Model final class Flight {
    @Key var id: Int
    @Unique var number: String
    var delay: Double?
    @Index var departs: Date
    var airline: Airline?
    var captain: Pilot?
    init(id: Int, number: String, departs: Date, airline: Airline?) { self.id = id; self.number = number; self.departs = departs; self.airline = airline }
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
