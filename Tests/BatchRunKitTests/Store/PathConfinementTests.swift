import Foundation
import Testing
@testable import BatchRunKit

/// `PathConfinement` and `ConfinedFolder` on real files: what is inside a root once links and
/// `..` are resolved, and that a folder once opened is the one written in, whatever is swapped
/// in at its path afterwards.
@Suite("Path confinement")
struct PathConfinementTests {
    /// A fresh folder with `root/` and `outside/`, removed by the caller.
    static func layout() throws -> URL {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("confine-\(UUID().uuidString)")
        for folder in ["root/data", "outside"] {
            try FileManager.default.createDirectory(at: base.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        return base
    }

    @Test("inside once resolved: .., absolute paths, links out, links that lead nowhere, missing folders inside")
    func violations() throws {
        let base = try Self.layout()
        defer { try? FileManager.default.removeItem(at: base) }
        let root = base.appendingPathComponent("root").path
        let fileManager = FileManager.default
        try fileManager.createSymbolicLink(atPath: root + "/out", withDestinationPath: "../outside")
        try fileManager.createSymbolicLink(atPath: root + "/nowhere.csv", withDestinationPath: base.path + "/outside/new.csv")
        try fileManager.createSymbolicLink(atPath: root + "/back", withDestinationPath: "data")
        let confinement = try PathConfinement(roots: [root])
        #expect(confinement.violation(of: root + "/data/x.csv") == nil)
        #expect(confinement.violation(of: root + "/data/new/deeper/x.csv") == nil)   // missing folders inside
        #expect(confinement.violation(of: root + "/back/x.csv") == nil)              // a link that stays inside
        #expect(confinement.violation(of: root + "/data/../../outside/x.csv") != nil)
        #expect(confinement.violation(of: base.path + "/outside/x.csv") != nil)
        #expect(confinement.violation(of: root + "/out/x.csv")?.reason.contains("resolves to") == true)
        #expect(confinement.violation(of: root + "/nowhere.csv") != nil)             // dangling: where it leads is not known
        #expect(confinement.violation(of: root + "/missing/../../outside/x.csv") != nil)
        #expect(throws: PathConfinementError.self) { try PathConfinement(roots: [base.path + "/none"]) }
    }

    @Test("a folder opened, then swapped for a link out of the root: the file is still made and renamed in the folder that was opened")
    func openedFolderStays() throws {
        let base = try Self.layout()
        defer { try? FileManager.default.removeItem(at: base) }
        let root = base.appendingPathComponent("root").path
        let confinement = try PathConfinement(roots: [root])
        let folder = try confinement.folder(holding: root + "/data/x.csv", creating: false)
        // Between the open and the writes (a fetch runs a while), the folder is moved away and a
        // link out of the root takes its place.
        try FileManager.default.moveItem(atPath: root + "/data", toPath: root + "/moved")
        try FileManager.default.createSymbolicLink(atPath: root + "/data", withDestinationPath: "../outside")
        let handle = try folder.openForWriting("x.csv.partial", truncating: true)
        try handle.write(contentsOf: Data("id\n1\n".utf8))
        try handle.close()
        try folder.rename("x.csv.partial", to: "x.csv")
        #expect(FileManager.default.fileExists(atPath: root + "/moved/x.csv"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: base.path + "/outside").isEmpty)
        // Opened again now, the path leads out: refused.
        #expect(throws: PathConfinementError.self) { try confinement.folder(holding: root + "/data/x.csv", creating: false) }
    }

    @Test("a file's own name swapped for a link: not followed when opened for reading or writing")
    func leafLinkNotFollowed() throws {
        let base = try Self.layout()
        defer { try? FileManager.default.removeItem(at: base) }
        let root = base.appendingPathComponent("root").path
        try "secret\n".write(toFile: base.path + "/outside/secret.csv", atomically: true, encoding: .utf8)
        try "id\n".write(toFile: root + "/data/feed.csv", atomically: true, encoding: .utf8)
        let confinement = try PathConfinement(roots: [root])
        let folder = try confinement.folder(holding: root + "/data/feed.csv", creating: false)
        try FileManager.default.removeItem(atPath: root + "/data/feed.csv")
        try FileManager.default.createSymbolicLink(atPath: root + "/data/feed.csv", withDestinationPath: base.path + "/outside/secret.csv")
        #expect(throws: PathConfinementError.self) { try folder.openForReading() }
        #expect(throws: PathConfinementError.self) { try folder.openForWriting("feed.csv", truncating: true) }
        #expect(try String(contentsOfFile: base.path + "/outside/secret.csv", encoding: .utf8) == "secret\n")
    }
}
