import ArgumentParser
import BatchRunKit
import Foundation

/// `batchrun plan FILE`: the jobs in waves, as text, Graphviz dot or JSON.
struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Show the jobs in waves (what can run together), with needs and descriptions.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, dot, json
    }

    @Argument(help: "The job file.", completion: .file(extensions: ["yaml", "yml"]))
    var file: String

    @Option(help: "Output format: text, dot (Graphviz) or json.")
    var format: Format = .text

    @OptionGroup var load: LoadOptions

    func run() throws {
        let loaded = try load.loadAll([file])[0]
        let plan = Plan(file: loaded)
        switch format {
        case .text:
            print(plan.text())
            let schema = SchemaPreview(of: loaded).lines
            if !schema.isEmpty { print(schema.joined(separator: "\n")) }
        case .dot: print(plan.dot())
        case .json: print(try plan.json())
        }
    }
}
