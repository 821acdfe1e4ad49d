import ArgumentParser
import BatchRunKit
import Foundation

/// `batchrun cancel QUEUE ITEM...`: cancels queued or running items.
struct CancelCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel",
        abstract: "Cancel items of a queue: a pending, scheduled or retryable one ends cancelled; a running one is cancelled as Ctrl-C cancels a run (the batch in flight rolled back) by its worker, which goes on.",
        discussion: "Items are named as `batchrun queue` prints them: a folder item's file name, a PostgreSQL item's id. Exit 2 when an item is not in the queue.")

    @Argument(help: "The queue folder, or postgresql://USER@HOST:PORT/DB.", completion: .directory)
    var queue: String

    @Argument(help: "The items to cancel.", completion: ShellCompletion.queueItems)
    var items: [String]

    func run() throws {
        let opened: any Queue
        do {
            opened = try openQueue(at: queue)
        } catch {
            throw CommandFailure("\(error)", status: ExitStatus.failed)
        }
        var missing: [String] = []
        for item in items {
            switch try opened.cancel(item) {
            case .cancelled: print("cancelled \(item)")
            case .requested: print("cancelling \(item): its worker cancels its run, then it ends cancelled")
            case .ended(let state): print("\(item) had already ended \(state.rawValue); nothing changed")
            case .notFound:
                missing.append("error: no item \(item) in \(opened.location) (name it as `batchrun queue` lists it)")
            }
        }
        if !missing.isEmpty { throw CommandFailure(located: missing.joined(separator: "\n"), status: ExitStatus.invalid) }
    }
}
