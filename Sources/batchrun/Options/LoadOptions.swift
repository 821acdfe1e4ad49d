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

    /// Given by a queue's worker started with `--root`: the folders the item's feeds, outputs
    /// and SQLite store must lie in (section 15).
    @Option(name: .customLong("root"), help: .hidden)
    var roots: [String] = []

    /// Given by a queue's worker that runs no shell hooks: why, for the error at each hook.
    @Option(help: .hidden)
    var refuseHooks: String?

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

    /// A job file given as text (a PostgreSQL queue item's, which is in no file), and what the
    /// run history knows it by.
    struct ItemText {
        var text: String
        var identity: String?
    }

    /// Loads every file at `paths` (keeping the selected jobs), or, with `item`, the one file
    /// `paths` names from its text; throws a `CommandFailure` with all their errors (exit
    /// status 2) when any is invalid.
    func loadAll(_ paths: [String], selection: JobSelection = JobSelection(), params: [String: String]? = nil,
                 item: ItemText? = nil) throws -> [JobFile] {
        var loader = JobFileLoader(params: params ?? paramValues, storeOverride: store)
        loader.baseDirectory = relativeTo
        loader.checksExpressionsOnServer = !checkedAtSubmit
        if !roots.isEmpty {
            do {
                loader.confinement = try PathConfinement(roots: roots)
            } catch {
                throw CommandFailure("--root \(error)", then: "nothing was run", status: ExitStatus.invalid)
            }
        }
        loader.hookRefusal = refuseHooks
        var files: [JobFile] = []
        var errors: [JobFileError] = []
        for path in paths {
            do {
                let file = if let item { try loader.load(text: item.text, path: path, runIdentity: item.identity) }
                    else { try loader.load(path: path) }
                files.append(try selection.apply(to: file))
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
