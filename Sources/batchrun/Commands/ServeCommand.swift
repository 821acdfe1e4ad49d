import ArgumentParser
import BatchRunKit
import BatchRunServer
import Foundation

/// `batchrun serve QUEUE`: a live page of a queue folder or a queue in PostgreSQL.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a live web page of a queue: counts, running items with their progress, waiting items, schedules, the last finished and failed items with their report and log, the audit log.",
        discussion: """
            Read-only unless --actions: then a reader signs in on the page with a token of --token-file (one NAME TOKEN a line, \
            chmod 600) and can cancel, retry, pause and resume, and run a schedule now; each action is written to the queue's \
            audit log under the token's NAME.
            """)

    @Argument(help: "The queue folder, or postgresql://USER@HOST:PORT/DB.", completion: .directory)
    var queue: String

    @Option(help: ArgumentHelp("Where to listen: loopback by default; 0.0.0.0:PORT exposes the page, with every finished item's report and log, to the network.", valueName: "HOST:PORT"))
    var listen = "127.0.0.1:8080"

    @Option(help: ArgumentHelp("Serve the page over HTTPS with this certificate chain (PEM); with --tls-key.", valueName: "FILE"),
            completion: .file())
    var tlsCert: String?

    @Option(help: ArgumentHelp("The private key (PEM) of --tls-cert.", valueName: "FILE"), completion: .file())
    var tlsKey: String?

    @Flag(help: "Offer cancel, retry, pause/resume and \"run this schedule now\" on the page, to readers who sign in with a token of --token-file.")
    var actions = false

    @Option(help: ArgumentHelp("With --actions: who may act, one NAME TOKEN a line (tokens of 16 characters or more; the file readable by its owner only).",
                               valueName: "FILE"), completion: .file())
    var tokenFile: String?

    @Option(help: ArgumentHelp("With --actions: an origin readers reach the page at besides --listen (a TLS proxy's, like https://queue.example.com); actions posted from any other are refused. Repeatable.",
                               valueName: "URL"))
    var origin: [String] = []

    @Flag(help: "Serve plain HTTP on an address other than loopback, on purpose (anyone on the network can then read the page, and what crosses it).")
    var insecureHTTP = false

    func validate() throws {
        guard let address = ListenAddress(listen) else { throw ValidationError("--listen takes HOST:PORT, like 127.0.0.1:8080") }
        if (tlsCert == nil) != (tlsKey == nil) { throw ValidationError("--tls-cert and --tls-key go together") }
        if actions && tokenFile == nil { throw ValidationError("--actions needs --token-file FILE: one NAME TOKEN a line, naming who may act") }
        if !actions && tokenFile != nil { throw ValidationError("--token-file goes with --actions") }
        if !actions && !origin.isEmpty { throw ValidationError("--origin goes with --actions") }
        for given in origin where !(given.hasPrefix("http://") || given.hasPrefix("https://")) || given.dropFirst(8).contains("/") && !given.hasSuffix("/") {
            throw ValidationError("--origin takes scheme://host[:port], like https://queue.example.com, found '\(given)'")
        }
        if actions && address.isWildcard && origin.isEmpty {
            throw ValidationError("""
                --listen \(listen) is every address of the machine: give --origin URL, the address readers' browsers use \
                (https://queue.example.com), so that actions are taken only from the page itself
                """)
        }
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
            let tokens = try tokenFile.map { try ServeTokens(contentsOf: $0) }
            server = try LiveQueueServer.start(queue: queue, listen: ListenAddress(listen)!, tls: tls, actions: tokens, origins: origin)
        } catch let error as ServerTLSError {
            throw CommandFailure("\(error)", status: ExitStatus.invalid)
        } catch let error as ServeTokenFileError {
            throw CommandFailure("\(error)", status: ExitStatus.invalid)
        } catch {
            throw CommandFailure(error is CocoaError ? error.localizedDescription : "\(error)", status: ExitStatus.failed)
        }
        let mode = actions ? ", actions on for who signs in" : ""
        FileHandle.standardOutput.write(Data("serving \(queue) at \(server.url)\(mode) (Ctrl-C stops)\n".utf8))
        let stopped = DispatchSemaphore(value: 0)
        SignalWatcher.start([SIGINT, SIGTERM]) { _ in stopped.signal() }
        stopped.wait()
        server.stop()
    }
}
