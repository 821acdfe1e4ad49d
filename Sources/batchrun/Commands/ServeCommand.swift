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

    @Option(help: ArgumentHelp("Serve the page over HTTPS with this certificate chain (PEM); with --tls-key.", valueName: "FILE"),
            completion: .file())
    var tlsCert: String?

    @Option(help: ArgumentHelp("The private key (PEM) of --tls-cert.", valueName: "FILE"), completion: .file())
    var tlsKey: String?

    @Flag(help: "Serve plain HTTP on an address other than loopback, on purpose (anyone on the network can then read the page, and what crosses it).")
    var insecureHTTP = false

    func validate() throws {
        guard let address = ListenAddress(listen) else { throw ValidationError("--listen takes HOST:PORT, like 127.0.0.1:8080") }
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
        if !address.isLoopback && tlsCert == nil && !insecureHTTP {
            throw ValidationError("""
                --listen \(listen) is not loopback: give --tls-cert FILE and --tls-key FILE to serve HTTPS, or --insecure-http \
                to serve plain HTTP to the network on purpose
                """)
        }
    }

    func run() throws {
        let tls = tlsCert.map { ServerTLS(certificate: $0, key: tlsKey ?? "") }
        let server: LiveQueueServer
        do {
            server = try LiveQueueServer.start(queue: queue, listen: ListenAddress(listen)!, tls: tls)
        } catch let error as ServerTLSError {
            throw CommandFailure("\(error)", status: ExitStatus.invalid)
        } catch {
            throw CommandFailure(error is CocoaError ? error.localizedDescription : "\(error)", status: ExitStatus.failed)
        }
        FileHandle.standardOutput.write(Data("serving \(queue) at \(server.url) (Ctrl-C stops)\n".utf8))
        let stopped = DispatchSemaphore(value: 0)
        SignalWatcher.start([SIGINT, SIGTERM]) { _ in stopped.signal() }
        stopped.wait()
        server.stop()
    }
}
