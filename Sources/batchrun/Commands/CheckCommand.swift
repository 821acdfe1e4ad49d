import ArgumentParser
import BatchRunKit
import Foundation

/// `batchrun check FILE`: validates everything and touches nothing.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate job files (keys, types, job graph, entities, expressions) and list the schema changes a run would make, without touching the store.")

    @Argument(help: "Job files to check.", completion: .file(extensions: ["yaml", "yml"]))
    var files: [String]

    @OptionGroup var load: LoadOptions

    func run() throws {
        let loaded = try load.loadAll(files)
        var stopsRun = false
        for file in loaded {
            let expressions = file.jobs.flatMap(\.steps).count
            print("\(file.path): ok (\(file.model.entities.count) entit\(file.model.entities.count == 1 ? "y" : "ies"), \(file.jobs.count) job\(file.jobs.count == 1 ? "" : "s"), \(expressions) step\(expressions == 1 ? "" : "s"))")
            if let reason = file.expressionsUnchecked {
                print("  expressions were not checked: \(reason)")
            }
            let schema = SchemaPreview(of: file)
            for line in schema.lines { print(line) }
            stopsRun = stopsRun || schema.stopsRun
        }
        if stopsRun { throw ExitCode(ExitStatus.invalid) }
    }
}
