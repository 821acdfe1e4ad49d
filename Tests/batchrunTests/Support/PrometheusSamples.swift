import Foundation

/// Prometheus' text format read back for the tests, by a parser of its own (not the one the
/// command uses): each sample line `name{labels} value` by `name{labels}` as written, and the
/// `# TYPE` of each family.
struct PrometheusSamples {
    var values: [String: Double] = [:]
    var types: [String: String] = [:]

    init(_ text: String) {
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") {
                let parts = line.split(separator: " ")
                if parts.count == 4 { types[String(parts[2])] = String(parts[3]) }
                continue
            }
            guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "),
                  let value = Double(line[line.index(after: space)...]) else { continue }
            values[String(line[..<space])] = value
        }
    }

    /// The value of `name` with these labels, in any order; nil when there is no such sample.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        for (key, value) in values {
            let brace = key.firstIndex(of: "{") ?? key.endIndex
            guard key[..<brace] == name else { continue }
            var found: [String: String] = [:]
            if brace < key.endIndex {
                for pair in key[key.index(after: brace)..<key.index(before: key.endIndex)].split(separator: ",") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2 else { continue }
                    found[String(parts[0])] = parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                }
            }
            if found == labels { return value }
        }
        return nil
    }
}

/// A GET over a plain socket to 127.0.0.1: the body, or nil when nothing answers.
func httpGet(port: Int, path: String) -> (status: Int, body: String)? {
    guard let text = loopbackGet(port: port, path: path, close: true, until: { _ in false }),
          let split = text.range(of: "\r\n\r\n") else { return nil }
    let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
    return (status, String(text[split.upperBound...]))
}

/// Sends `GET path` to 127.0.0.1:`port` and reads the answer until the server closes or
/// `done` says what arrived is enough: the whole answer (head and body), or nil when nothing answers.
func loopbackGet(port: Int, path: String, close closing: Bool, until done: (String) -> Bool) -> String? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { return nil }
    let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(closing ? "Connection: close\r\n" : "")\r\n".utf8)
    guard write(fd, request, request.count) == request.count else { return nil }
    var response: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = read(fd, &chunk, chunk.count)
        guard count > 0 else { break }
        response += chunk[..<count]
        let text = String(decoding: response, as: UTF8.self)
        if done(text) { return text }
    }
    return response.isEmpty ? nil : String(decoding: response, as: UTF8.self)
}

/// The local addresses (hex, as /proc/net/tcp and tcp6 write them) listening on `port`.
func listeningAddresses(port: Int) -> [String] {
    let portHex = String(format: "%04X", port)
    var found: [String] = []
    for file in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 3, fields[3] == "0A" else { continue }   // LISTEN
            let local = fields[1].split(separator: ":")
            if local.count == 2, local[1] == portHex { found.append(String(local[0])) }
        }
    }
    return found
}

/// The port a worker started with `--metrics :0` says it serves on (`metrics at
/// http://127.0.0.1:PORT/metrics`), read from its output at `output`; nil after 60 s.
func metricsPort(announcedIn output: URL) -> Int? {
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline {
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        if let range = text.range(of: "metrics at http://127.0.0.1:") { return Int(text[range.upperBound...].prefix { $0.isNumber }) }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return nil
}
