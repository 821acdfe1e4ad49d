import Foundation
import Testing

/// What the compiler refuses (issue 49): a snippet using `@Model` and `#Filter` compiled with
/// `swiftc -typecheck` against this build's modules and macro plugin; a misspelled property
/// and a comparison with a value of the wrong type are compile errors at their lines, and the
/// same snippet spelled right compiles (so the errors are the snippet's, not the set-up's).
@Suite("Models: what does not compile")
struct ModelCompileTests {
    /// The test binary's folder: the build's (`.build/debug`), with `Modules` and the plugin.
    static let build = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func typecheck(_ source: String, options: [String] = []) throws -> (status: Int32, output: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("batchrun-compile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("snippet.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        // The C modules the library's modules import: SwiftPM's generated maps and the packages' own.
        var maps: [String] = []
        for base in [build.path, root.appendingPathComponent(".build/checkouts").path, root.appendingPathComponent("Sources").path] {
            let walk = FileManager.default.enumerator(atPath: base)
            while let path = walk?.nextObject() as? String {
                let depth = path.split(separator: "/").count
                guard path.hasSuffix("module.modulemap"), base != build.path || depth == 2 else { continue }
                maps += ["-Xcc", "-fmodule-map-file=\(base)/\(path)"]
            }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swiftc", "-typecheck", "-swift-version", "6", "-I", build.appendingPathComponent("Modules").path]
            + options + maps + ["-load-plugin-executable", build.appendingPathComponent("BatchRunMacros-tool").path + "#BatchRunMacros", file.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    static func snippet(property: String, value: String) -> String {
        """
        import BatchRunModels
        @Model final class Plane {
            @Key var id: Int
            var seats: Int
            init(id: Int, seats: Int) { self.id = id; self.seats = seats }
        }
        let filter = #Filter<Plane> { $0.\(property) > \(value) }
        """
    }

    @Test("a misspelled property and a wrong-typed comparison in #Filter do not compile; spelled right, the snippet does")
    func refused() throws {
        let right = try Self.typecheck(Self.snippet(property: "seats", value: "10"))
        #expect(right.status == 0, "\(right.output)")
        let misspelled = try Self.typecheck(Self.snippet(property: "seets", value: "10"))
        #expect(misspelled.status != 0 && misspelled.output.contains("snippet.swift:7:") && misspelled.output.contains("has no member 'seets'"), "\(misspelled.output)")
        let wrongType = try Self.typecheck(Self.snippet(property: "seats", value: "\"ten\""))
        #expect(wrongType.status != 0 && wrongType.output.contains("snippet.swift:7:") && wrongType.output.contains("cannot convert value of type 'String' to expected argument type 'Int'"), "\(wrongType.output)")
    }

    @Test("models compile in a target whose default isolation is the main actor (SE-0466, as new app targets are), relationships and filters too")
    func mainActorByDefault() throws {
        let source = """
            import BatchRunKit
            import BatchRunModels
            @Model final class Plane {
                @Key var id: Int
                var seats: Int
                var maker: Maker?
                init(id: Int, seats: Int) { self.id = id; self.seats = seats }
            }
            @Model final class Maker {
                @Key var id: Int
                @Relationship(deleteRule: .cascade, inverse: \\Plane.maker) var planes: [Plane]
                init(id: Int) { self.id = id }
            }
            func model() throws -> Model {
                _ = FetchDescriptor(filter: #Filter<Plane> { $0.seats > 10 && $0.maker?.id == 3 }, sortBy: [ModelSort(\\.seats)])
                return try Model(Plane.self, Maker.self)
            }
            """
        for options in [[], ["-default-isolation", "MainActor"]] {
            let result = try Self.typecheck(source, options: options)
            #expect(result.status == 0, "\(options): \(result.output)")
        }
    }

    @Test("@Model refuses what cannot be a row, at the declaration: no @Key, a let, a property without a type, a struct")
    func declarationsRefused() throws {
        let cases = [
            ("@Model final class A { var name: String = \"\" }", "mark the primary key of A with @Key"),
            ("@Model final class A { @Key var id: Int = 0; let name: String = \"\" }", "a @Model property is a `var`"),
            ("@Model final class A { @Key var id: Int = 0; var name = \"\" }", "give `name` its type"),
            ("@Model struct A { @Key var id: Int = 0 }", "@Model applies to a class"),
        ]
        for (declaration, message) in cases {
            let result = try Self.typecheck("import BatchRunModels\n" + declaration)
            #expect(result.status != 0 && result.output.contains(message), "\(declaration): \(result.output)")
        }
    }
}
