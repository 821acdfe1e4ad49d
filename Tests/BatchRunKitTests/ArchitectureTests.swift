import Foundation
import Testing

/// The rules of ../shared/ARCHITECTURE.md that a reader of the tree can check, checked on the
/// tree itself: layers that import only downwards, a narrow public face, a thin command, and the
/// backend chosen only by the Store.
@Suite("Architecture")
struct ArchitectureTests {
    /// The package's root, from this file's place in it (Tests/BatchRunKitTests/).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Every Swift file below `folder` (relative to the root), with its text.
    static func sources(in folder: String) throws -> [(path: String, text: String)] {
        let base = root.appendingPathComponent(folder)
        let files = FileManager.default.enumerator(atPath: base.path)?.compactMap { $0 as? String } ?? []
        return try files.filter { $0.hasSuffix(".swift") }.sorted().map { file in
            (folder + "/" + file, try String(contentsOf: base.appendingPathComponent(file), encoding: .utf8))
        }
    }

    /// The library's modules, bottom to top (Package.swift): each may import only those before it.
    static let libraryModules = ["BatchRunStore", "BatchRunSQLite", "BatchRunPostgres", "BatchRunContext", "BatchRunFeeds",
                                 "BatchRunEngine", "BatchRunQueue", "BatchRunModels", "BatchRunKit"]

    /// Every Swift file of the library's modules.
    static func librarySources() throws -> [(path: String, text: String)] {
        try libraryModules.flatMap { try sources(in: "Sources/" + $0) }
    }

    @Test("the layers are modules: a library module imports only the modules below it, and the backends not each other")
    func layersImportDownwards() throws {
        let importLine = try Regex(#"(?m)^\s*(?:@_exported\s+)?import\s+(BatchRun\w+)"#)
        var imports = 0
        for (level, module) in Self.libraryModules.enumerated() {
            var below = Set(Self.libraryModules.prefix(level))
            // SQLite and PostgreSQL are side by side, not one above the other.
            if module == "BatchRunPostgres" { below.remove("BatchRunSQLite") }
            for file in try Self.sources(in: "Sources/" + module) {
                for match in Self.withoutComments(file.text).matches(of: importLine) {
                    let imported = String(match.output[1].substring ?? "")
                    imports += 1
                    #expect(below.contains(imported), "\(file.path) imports \(imported), which is not below \(module)")
                }
            }
        }
        #expect(imports > 100, "\(imports) imports found: the walk is broken")
    }

    /// 300 before issue 34; raised by exactly the declarations issue 34 added and documented in
    /// docs/library.md: `MainContext.mergePolicy` (1), `DatabaseFailure` with `message` and
    /// `description` (3), `FetchRequest.sortedBy` (1), `existingObjects(with:)` on `Context` and
    /// `MainContext` (2); `retainsRegisteredObjects` on `Context` and `MainContext` (2: objects
    /// held weakly, as Core Data's, so saves follow the changes), `FetchRequest.fetchBatchSize`
    /// (1: the main context registers an async fetch's objects in hops); typed records (24: the
    /// `Record` protocol; `Attribute` with `name`, `init`, `ascending`, `descending` and its six
    /// comparisons; `RecordFilter` with `&&` and `||`; `FetchRequest.init(_:where:limit:)`;
    /// `fetch(_:as:)`, `insert`, `update` and `delete` of records on `Context` and `MainContext`);
    /// relationships (13: `Relationship` with its init and five properties, `DeleteRule`,
    /// `Entity.relationships`, `relatedObject` and `relatedObjects` on `Context` and `MainContext`).
    /// Live results (28: `results(for:sectionedBy:)` and `results(for:as:sectionedBy:)` on `Context`
    /// and `MainContext`; `LiveResults` with `Element`, `makeAsyncIterator`, `AsyncIterator` and its
    /// two `next`; `ResultsSnapshot` and its four properties; `ResultsSection` and its three;
    /// `ResultsChange` with `Move` (`from`, `to`), its four index lists and `isEmpty`).
    /// `StoreValue`'s `==` and `hash(into:)` (2), written out to be `@inlinable`: the API Swift
    /// synthesized for its `Hashable` before.
    /// Models (issue 49, BatchRunModels: 116): the macros (`Model`, `_ModelProperty`, `Key`,
    /// `Unique`, `Index`, `Transient`, `Relationship`, `Filter`); `PersistentModel` and its three
    /// requirements; `ColumnValue` with its four requirements and default, and its conformances
    /// (`Int`, `Int64`, `Int32`, `Double`, `Float`, `String`, `Bool`, `Date`, `Data`, optionals and raw-value
    /// enums: three members each); `ModelSchema`, `ModelProperty` and its `Kind`, `ModelBacking`
    /// (the accessors' `value`/`setValue` for columns, to-ones and to-manys), `ModelFilter` (its `isIn` for an optional too, `notNil`),
    /// `ModelComparison`, `ModelSort`, `FetchDescriptor`, `ColumnNaming`, `ModelError`,
    /// `Model.init(_:columnNames:)`, `insert`/`fetch`/`delete` and the two `related(_:of:)` of
    /// models on `Context` and `MainContext`, `String.like`.
    static let publicBound = 300 + 1 + 3 + 1 + 2 + 2 + 1 + 24 + 13 + 28 + 2 + 116   // + 13: relationships; + 28: live results; + 116: models

    @Test("the library's public face is what docs/library.md documents: at most 493 public declarations")
    func publicFace() throws {
        // A type public for the package's modules alone (`@_spi(BatchRunPackage)`, so that its
        // `@inlinable` members inline in them) is not part of the face; attributes before a
        // declaration (`@inlinable public init`) do not hide it.
        let declarations = try Self.librarySources().filter { !$0.text.contains("@_spi(BatchRunPackage) public") }.flatMap { file in
            file.text.split(separator: "\n").filter { line in
                var trimmed = line.drop { $0 == " " }
                while trimmed.hasPrefix("@"), let space = trimmed.firstIndex(of: " "), !trimmed[..<space].contains("(") {
                    trimmed = trimmed[space...].drop { $0 == " " }
                }
                return trimmed.hasPrefix("public ") || trimmed.hasPrefix("open ")
            }.map { "\(file.path): \($0)" }
        }
        #expect(declarations.count > 50, "the count found nothing: the walk is broken")
        #expect(declarations.count <= Self.publicBound, "\(declarations.count) public declarations; the bound is \(Self.publicBound): raise it only by what docs/library.md documents")
    }

    @Test("no database client's type appears in a public declaration: GRDB's and PostgresNIO's errors, values and connections stay inside")
    func noClientTypesInPublicFace() throws {
        let clientTypes = try Regex(#"\b(DatabaseError|DatabaseValue|DatabasePool|DatabaseQueue|Database|Row|RowCursor|StatementArguments|Statement|PSQLError|PostgresError|PostgresConnection|PostgresClient|PostgresRow|PostgresData|PostgresQuery|ByteBuffer|EventLoop\w*|Channel|NIO\w+)\b"#)
        var publicLines = 0
        for file in try Self.librarySources() {
            for line in file.text.split(separator: "\n") {
                let trimmed = line.drop { $0 == " " }
                guard trimmed.hasPrefix("public ") || trimmed.hasPrefix("open ") else { continue }
                publicLines += 1
                // Only the declaration, not a trailing comment that may name a client's type.
                let code = trimmed.split(separator: "//", maxSplits: 1).first.map(String.init) ?? ""
                let found = code.firstMatch(of: clientTypes).map { String($0.output[0].substring ?? "") }
                #expect(found == nil, "\(file.path): a public declaration names \(found ?? ""): \(trimmed)")
            }
        }
        #expect(publicLines > 50, "the walk found nothing")
    }

    /// Commands and their options, shell completion and `--version`; what they do is in the library.
    /// (Raised from 1,600 for `retry`, `limit`, `pause`, `resume`, `prune`, `serve --tls-*` and `submit
    /// --fan-out/--group`: mostly their options' help.)
    @Test("the command is thin: at most 1,900 lines of Swift in Sources/batchrun")
    func thinCommand() throws {
        let lines = try Self.sources(in: "Sources/batchrun").reduce(0) { $0 + $1.text.split(separator: "\n", omittingEmptySubsequences: false).count - 1 }
        #expect(lines > 100, "the count found nothing: the walk is broken")
        #expect(lines <= 1_900, "\(lines) lines")
    }

    @Test("a command's error reaches standard error through one place: BatchRunCommand.report (the interrupt notices aside)")
    func commandsPrintErrorsThroughOnePlace() throws {
        let files = try Self.sources(in: "Sources/batchrun")
        #expect(files.count > 10)
        let writesError = try Regex(#"FileHandle\.standardError|\bfputs\(|\bperror\("#)
        var reporters = 0
        for file in files {
            let writes = Self.withoutComments(file.text).matches(of: writesError).count
            if file.path.hasSuffix("Commands/BatchRunCommand.swift") {
                reporters += writes
            } else if !file.path.hasSuffix("Process/InterruptHandler.swift") {
                #expect(writes == 0, "\(file.path) writes to standard error itself: throw a CommandFailure")
            }
        }
        #expect(reporters == 1, "BatchRunCommand.report is the one write")
    }

    @Test("no file above the Store imports a database client or tells a PostgreSQL location from another")
    func backendChosenOnce() throws {
        let files = try Self.sources(in: "Sources").filter { file in
            !["Sources/BatchRunStore/", "Sources/BatchRunSQLite/", "Sources/BatchRunPostgres/", "Sources/BatchRunContext/Store/"]
                .contains { file.path.hasPrefix($0) }
        }
        #expect(files.count > 20)
        let clientImport = try Regex(#"(?m)^\s*(@_implementationOnly\s+)?import\s+(GRDB|GRDBSQLite|PostgresNIO|NIO\w*)\b"#)
        // The command's HTTP server (BatchRunServer/HTTP) is on SwiftNIO: NIO, not a database client.
        let serverClientImport = try Regex(#"(?m)^\s*(@_implementationOnly\s+)?import\s+(GRDB|GRDBSQLite|PostgresNIO)\b"#)
        let locationTest = try Regex(#"isPostgresURL|hasPrefix\("postgres|Kind\(location:"#)
        for file in files {
            // So are remote feeds' HTTP client (BatchRunFeeds/Remote, AsyncHTTPClient on NIO).
            let onNIO = file.path.hasPrefix("Sources/BatchRunServer/HTTP/") || file.path.hasPrefix("Sources/BatchRunFeeds/Remote/")
            let forbidden = onNIO ? serverClientImport : clientImport
            let importsClient = file.text.firstMatch(of: forbidden) != nil
            let readsLocation = file.text.firstMatch(of: locationTest) != nil
            #expect(!importsClient, "\(file.path) imports a database client")
            #expect(!readsLocation, "\(file.path) tells a PostgreSQL location from another")
        }
    }

    @Test("only the Context writes through the Store's backend and change log: steps, runs and queues go through it or the Store")
    func onePathToTheBackend() throws {
        let files = try Self.sources(in: "Sources").filter { file in
            !["Sources/BatchRunStore/", "Sources/BatchRunSQLite/", "Sources/BatchRunPostgres/", "Sources/BatchRunContext/"]
                .contains { file.path.hasPrefix($0) }
        }
        let reach = try Regex(#"\.backend\b|\bchangeLog\b"#)
        for file in files {
            let reaches = file.text.firstMatch(of: reach) != nil
            #expect(!reaches, "\(file.path) reaches the Store's backend or change log")
        }
    }

    @Test("errors are thrown, not printed: nothing in the library prints to standard error or exits, and every error type it shows is a BatchRunError")
    func structuredErrors() throws {
        let files = try Self.librarySources()
        #expect(files.count > 100)
        // Standard output is written on purpose only (a fetch's `output: -`, a worker's log lines).
        let printsOrExits = try Regex(#"(?m)^[^/\n]*\b(print\(|exit\(|fatalError\(|FileHandle\.standardError|CocoaError\()"#)
        // A top-level public or package type that is an Error but not a BatchRunError.
        let plainError = try Regex(#"(?m)^(?:public|package) (?:struct|enum|final class) (\w+)[^{\n]*:[^{\n]*\bError\b"#)
        var errorTypes = 0
        // Statuses/Warning.swift is the one place a warning goes to standard error.
        for file in files {
            let printed = file.path.hasSuffix("Statuses/Warning.swift") ? nil : file.text.firstMatch(of: printsOrExits).map { String($0.output[0].substring ?? "") }
            #expect(printed == nil, "\(file.path) prints, exits or throws a CocoaError: \(printed ?? "")")
            // Two are plumbing between modules, never shown: a checker's result (a job-file
            // diagnostic above it) and a row's failure inside an import (a rejected row or a StepError above it).
            let plain = file.text.firstMatch(of: plainError).map { String($0.output[0].substring ?? "") }
                .flatMap { ["package struct ExpressionProblem: Error", "package enum ImportRowFailure: Error"].contains($0) ? nil : $0 }
            #expect(plain == nil, "\(file.path) has an error type that is not a BatchRunError: \(plain ?? "")")
            errorTypes += file.text.matches(of: try Regex(#"(?m)^(?:public |package )?(?:struct|enum) \w+: BatchRunError\b"#)).count
        }
        #expect(errorTypes >= 9, "\(errorTypes) BatchRunError types: the walk is broken")
    }

    /// `text` with its comments (`//` to the end of the line, `/* */`, nested) and the contents of
    /// its string literals blanked, line breaks kept so lines still count: a doc comment or a
    /// message may show the form the rule refuses, and `"http://"` starts no comment.
    static func withoutComments(_ text: String) -> String {
        let chars = Array(text)
        var out: [Character] = []
        out.reserveCapacity(chars.count)
        var i = 0
        func blank(_ c: Character) -> Character { c == "\n" ? "\n" : " " }
        while i < chars.count {
            let c = chars[i], next: Character? = i + 1 < chars.count ? chars[i + 1] : nil
            if c == "/" && next == "/" {
                while i < chars.count && chars[i] != "\n" { out.append(" "); i += 1 }
            } else if c == "/" && next == "*" {
                var depth = 0
                repeat {
                    if chars[i] == "/" && i + 1 < chars.count && chars[i + 1] == "*" {
                        depth += 1; out += [" ", " "]; i += 2
                    } else if chars[i] == "*" && i + 1 < chars.count && chars[i + 1] == "/" {
                        depth -= 1; out += [" ", " "]; i += 2
                    } else {
                        out.append(blank(chars[i])); i += 1
                    }
                } while depth > 0 && i < chars.count
            } else if c == "#" || c == "\"" {
                // A string literal: `#`s, then `"` or `"""`; it ends at the same quotes and `#`s.
                var hashes = 0
                while i + hashes < chars.count && chars[i + hashes] == "#" { hashes += 1 }
                guard i + hashes < chars.count, chars[i + hashes] == "\"" else {
                    out.append(c); i += 1; continue
                }
                let multiline = i + hashes + 2 < chars.count && chars[i + hashes + 1] == "\"" && chars[i + hashes + 2] == "\""
                let quotes = multiline ? 3 : 1
                let closing = Array(String(repeating: "\"", count: quotes) + String(repeating: "#", count: hashes))
                out += chars[i..<(i + hashes + quotes)]; i += hashes + quotes
                while i < chars.count {
                    if hashes == 0 && chars[i] == "\\" && i + 1 < chars.count {
                        out += [" ", blank(chars[i + 1])]; i += 2; continue
                    }
                    if i + closing.count <= chars.count && Array(chars[i..<(i + closing.count)]) == closing {
                        out += closing; i += closing.count; break
                    }
                    if !multiline && chars[i] == "\n" { break }
                    out.append(blank(chars[i])); i += 1
                }
            } else {
                out.append(c); i += 1
            }
        }
        return String(out)
    }

    /// Each `Mutex<...>` in `text` (comments blanked first) whose value type is a function type
    /// bare, optional or in a tuple: its line (1-based) and the type as written. The method: the
    /// balanced generic argument after `Mutex<`, with the text inside `[...]` and `<...>` taken
    /// out (an array, a dictionary or another generic type holds the closure at one
    /// representation); an `->` that remains is a function type the value itself is made of.
    static func closuresInMutexes(_ text: String) -> [(line: Int, type: String)] {
        let chars = Array(withoutComments(text))
        let word: (Character) -> Bool = { $0.isLetter || $0.isNumber || $0 == "_" }
        var found: [(line: Int, type: String)] = []
        var line = 1, i = 0
        let keyword = Array("Mutex<")
        while i < chars.count {
            if chars[i] == "\n" { line += 1 }
            guard chars[i] == "M", i + keyword.count <= chars.count, Array(chars[i..<(i + keyword.count)]) == keyword,
                  i == 0 || !word(chars[i - 1]) else { i += 1; continue }
            // The balanced argument: `<` opens, `>` closes, but not the `>` of `->`.
            var depth = 1, j = i + keyword.count
            var argument: [Character] = []
            while j < chars.count {
                let c = chars[j]
                if c == "<" { depth += 1 }
                if c == ">" && !(j > 0 && chars[j - 1] == "-") {
                    depth -= 1
                    if depth == 0 { break }
                }
                argument.append(c); j += 1
            }
            // Take out what is inside brackets and angle brackets (nested), keeping the rest.
            var kept = "", nesting: [Character] = []
            for (k, c) in argument.enumerated() {
                let arrow = c == ">" && k > 0 && argument[k - 1] == "-"
                if c == "[" || c == "<" { nesting.append(c); continue }
                if (c == "]" && nesting.last == "[") || (c == ">" && !arrow && nesting.last == "<") { nesting.removeLast(); continue }
                if nesting.isEmpty { kept.append(c) }
            }
            if kept.contains("->") {
                found.append((line, String(argument).split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")))
            }
            i += keyword.count
        }
        return found
    }

    @Test("a closure kept in a Mutex is wrapped in Callback: no Mutex's value is a function type, bare, optional or in a tuple (issue 50)")
    func closuresInMutexesAreWrapped() throws {
        // The check itself, on what it must refuse and what it must let through.
        let refused = ["Mutex<(@Sendable () -> Void)?>(nil)", "Mutex<@Sendable (Int) -> Void>", "Mutex<(() -> Void)?>",
                       "Mutex<(count: Int, done: (@Sendable () -> Void)?)>", "Mutex<(Int, [String], @Sendable (Event) -> Void)>",
                       "let m: Mutex<\n    (@Sendable (Result<Int, any Error>) -> Void)?\n>"]
        for sample in refused {
            #expect(Self.closuresInMutexes(sample).count == 1, "not refused: \(sample)")
        }
        #expect(Self.closuresInMutexes("let a = 1\nlet m = Mutex<(@Sendable () -> Void)?>(nil)").first?.line == 2)
        let allowed = ["Mutex<Callback<@Sendable (Event) -> Void>?>(nil)", "Mutex<[String: @Sendable (String) -> Void]>([:])",
                       "Mutex<[@Sendable (any StoreConnection, Int64) throws -> Void]>([])", "Mutex<(run: Date?, jobs: [String: Date])>",
                       "Mutex<Result<(Int, HTTPHeaders, String), any Error>?>(nil)", "Mutex<Int>(0) // Mutex<(() -> Void)?>",
                       "/// `Mutex<(@Sendable (Event) -> Void)?>`", "/* Mutex<() -> Void> /* nested */ */ Mutex<Int>",
                       "let s = \"Mutex<(() -> Void)?>\" // Mutex<() -> Void>", "TestMutex<() -> Void>"]
        for sample in allowed {
            #expect(Self.closuresInMutexes(sample).isEmpty, "refused: \(sample)")
        }

        let files = try Self.sources(in: "Sources")
        #expect(files.count > 100, "the walk found \(files.count) files")
        var mutexes = 0
        for file in files {
            mutexes += Self.withoutComments(file.text).components(separatedBy: "Mutex<").count - 1
            for closure in Self.closuresInMutexes(file.text) {
                Issue.record("\(file.path):\(closure.line): Mutex<\(closure.type)> keeps a function type as its value; wrap the closure in Callback (Sources/BatchRunStore/Store/Callback.swift): every withLock re-wraps a bare one in two reabstraction thunks (issue 50)")
            }
        }
        #expect(mutexes >= 20, "\(mutexes) Mutex<...> found: the walk is broken")
    }

    /// Each blocking sleep in `text` outside comments and string literals: `Thread.sleep(`,
    /// `usleep(`, `nanosleep(` or a bare `sleep(` (not `Task.sleep(`, which suspends, nor `pg_sleep(`).
    static func blockingSleeps(_ text: String) throws -> [String] {
        // The name, after anything but a letter, a digit, `_` or `.` (Swift's Regex has no lookbehind).
        let sleep = try Regex(#"(?m)(?:^|[^\w.])(Thread\.sleep|usleep|nanosleep|sleep)\("#)
        return withoutComments(text).matches(of: sleep).map { String($0.output[1].substring ?? "") }
    }

    @Test("a wait between tries goes through Backoff: at most 2 blocking sleeps in Sources, Backoff's and one more only with a reason")
    func blockingSleepsGoThroughBackoff() throws {
        // The check itself, on what it must count and what it must let through.
        #expect(try Self.blockingSleeps("Thread.sleep(forTimeInterval: 1); usleep(50_000); sleep(2); nanosleep(&t, nil)").count == 4)
        let allowed = ["try await Task.sleep(for: .seconds(1))", "// Thread.sleep(forTimeInterval: 1)", "/// usleep(50_000)",
                       "let sql = \"SELECT pg_sleep(5); usleep(1)\"", "asleep(); sleeper.sleep(1)"]
        for sample in allowed {
            #expect(try Self.blockingSleeps(sample).isEmpty, "counted: \(sample)")
        }

        let files = try Self.sources(in: "Sources")
        #expect(files.count > 100, "the walk found \(files.count) files")
        var found: [String] = []
        for file in files {
            found += try Self.blockingSleeps(file.text).map { "\(file.path): \($0)" }
        }
        #expect(found.contains { $0.hasPrefix("Sources/BatchRunStore/Store/Backoff.swift: ") }, "Backoff's sleep not found: the walk is broken")
        #expect(found.count <= 2, "\(found.count) blocking sleeps; wait through Backoff (Sources/BatchRunStore/Store/Backoff.swift): \(found)")
    }
}
