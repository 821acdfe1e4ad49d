import ArgumentParser
import BatchRunKit
import BatchRunServer
import Foundation

/// `batchrun serve QUEUE`: a live page of a queue folder or a queue in PostgreSQL.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a live, read-only web page of a queue: counts, running items with their progress, waiting items, schedules, the last finished and failed items with their report and log.")

    @Argument(help: "The queue folder, or postgresql://USER@HOST:PORT/DB.", completion: .directory)
    var queue: String

    @Option(help: ArgumentHelp("Where to listen: loopback by default; 0.0.0.0:PORT exposes the page, with every finished item's report and log, to the network.", valueName: "HOST:PORT"))
    var listen = "127.0.0.1:8080"

    func validate() throws {
        if ListenAddress(listen) == nil { throw ValidationError("--listen takes HOST:PORT, like 127.0.0.1:8080") }
    }

    func run() throws {
        let server = try WorkerCommand.orExit(ExitStatus.failed) { try LiveQueueServer.start(queue: queue, listen: ListenAddress(listen)!) }
        FileHandle.standardOutput.write(Data("serving \(queue) at \(server.url) (Ctrl-C stops)\n".utf8))
        let stopped = DispatchSemaphore(value: 0)
        SignalWatcher.start([SIGINT, SIGTERM]) { _ in stopped.signal() }
        stopped.wait()
        server.stop()
    }
}
