import ArgumentParser
import BatchRunKit
import Foundation

/// Options every command that loads job files shares.
struct LoadOptions: ParsableArguments {
    @Option(name: .customLong("param"), help: ArgumentHelp("Set or override a param (NAME=VALUE); repeatable.", valueName: "NAME=VALUE"))
    var params: [String] = []

    @Option(help: ArgumentHelp("Use this store instead of the job file's: an SQLite file, or postgresql://USER@HOST:PORT/DB.", valueName: "PATH|URL"))
    var store: String?

    @Option(name: .customLong("relative-to"), help: ArgumentHelp("Resolve the job file's relative paths against this folder instead of the file's own (queue items resolve against their queue).", valueName: "DIR"))
    var relativeTo: String?

    /// Given by a PostgreSQL queue's worker: the item's expressions were prepared on the server
    /// when it was submitted, so its run does not prepare them again.
    @Flag(help: .hidden)
    var checkedAtSubmit = false

    func validate() throws {
        for param in params where !param.contains("=") || param.hasPrefix("=") {
            throw ValidationError("--param takes NAME=VALUE, got '\(param)'")
        }
    }

    var paramValues: [String: String] {
        Dictionary(params.map { entry in
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }, uniquingKeysWith: { $1 })
    }

    /// Loads every file at `paths` (keeping the selected jobs), or, with a PostgreSQL item's
    /// `handoff`, the one file `paths` names from its text; a queue item's `handoff` also gives
    /// its params and what it may touch. Throws a `CommandFailure` with all their errors (exit
    /// status 2) when any is invalid.
    func loadAll(_ paths: [String], selection: JobSelection = JobSelection(), params: [String: String]? = nil,
                 handoff: ItemHandoff? = nil) throws -> [JobFile] {
        var loader = JobFileLoader(params: params ?? handoff?.params ?? paramValues, storeOverride: store)
        loader.baseDirectory = relativeTo
        loader.checksExpressionsOnServer = !checkedAtSubmit
        handoff?.confinement.apply(to: &loader)
        loader.listsFeedParts = handoff?.role == nil
        var files: [JobFile] = []
        var errors: [JobFileError] = []
        for path in paths {
            do {
                let file = if let text = handoff?.text { try loader.load(text: text, path: path, runIdentity: handoff?.identity) }
                    else { try loader.load(path: path) }
                files.append(try selection.apply(to: handoff?.role?.apply(to: file) ?? file))
            } catch {
                errors.append(error)
            }
        }
        if !errors.isEmpty {
            let count = errors.map(\.diagnostics.count).reduce(0, +)
            let text = errors.map(\.rendered).joined(separator: "\n") + "\n\(count) error\(count == 1 ? "" : "s"); nothing was run\n"
            throw CommandFailure(located: text, status: ExitStatus.invalid)
        }
        return files
    }
}
