import Foundation
import Testing
@testable import BatchRunKit
@_spi(BatchRunPackage) import BatchRunStore
import BatchRunPostgres
import TestSupport

/// Connecting as libpq does, against a cluster set up as production servers are: `ssl = on`
/// with a CA and a server certificate `openssl` makes here, `hostssl` lines only (SCRAM-SHA-256
/// for `batch`, md5 for `md5user`, trust for `trustuser`), and SCRAM over the Unix socket.
/// Every environment is a dictionary passed in: the process's own is never changed.
@Suite("PostgreSQL connections: TLS, logins, libpq's environment")
struct PostgresTLSTests {
    /// The cluster and the files the tests point at.
    struct Setup: Sendable {
        let cluster: PostgresServer.Cluster
        /// The CA that signed the server's certificate, another CA, and a folder to write in.
        let ca: String, otherCA: String, folder: String
    }

    static let setup: Result<Setup, any Error> = Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pg-tls-\(UUID().uuidString)").path
        let files = folder + "/server-files"
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        // A CA, a server certificate it signs (for localhost only), and a CA that signed nothing.
        try shell("""
            set -e
            cd '\(folder)'
            key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
            key ca.key; key other.key; key server.key
            openssl req -x509 -new -key ca.key -out ca.crt -days 2 -subj '/CN=batchrun test CA' \\
              -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
            openssl req -x509 -new -key other.key -out other.crt -days 2 -subj '/CN=another CA' \\
              -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign
            openssl req -new -key server.key -out server.csr -subj '/CN=localhost'
            printf 'subjectAltName=DNS:localhost\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > server.ext
            openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext -out server.crt 2>/dev/null
            # A client certificate for the role certuser (the server checks it against ca.crt).
            key client.key
            openssl req -new -key client.key -out client.csr -subj '/CN=certuser'
            printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n' > client.ext
            openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile client.ext -out client.crt 2>/dev/null
            chmod 600 client.key
            # A server certificate that expired in 2020 (openssl ca sets the dates).
            key expired.key
            openssl req -new -key expired.key -out expired.csr -subj '/CN=localhost'
            mkdir -p ca-db expired-files; : > ca-db/index.txt; echo 01 > ca-db/serial
            printf '[ca]\ndefault_ca = test\n[test]\ndatabase = ca-db/index.txt\nserial = ca-db/serial\nnew_certs_dir = ca-db\ndefault_md = sha256\npolicy = any\n[any]\ncommonName = supplied\n' > ca.cnf
            openssl ca -batch -config ca.cnf -cert ca.crt -keyfile ca.key -in expired.csr -out expired.crt -notext \
              -startdate 20200101000000Z -enddate 20200102000000Z -extfile server.ext 2>/dev/null
            cp expired.crt expired-files/server.crt; cp expired.key expired-files/server.key
            cp server.crt server.key ca.crt server-files/
            """)
        let cluster = try PostgresServer.start(
            settings: ["ssl = on", "ssl_cert_file = 'server.crt'", "ssl_key_file = 'server.key'", "ssl_ca_file = 'ca.crt'",
                       "log_connections = on"],
            hba: ["local all postgres trust",
                  "local all all scram-sha-256",
                  "hostssl all trustuser 127.0.0.1/32 trust",
                  "hostssl all certuser 127.0.0.1/32 cert",
                  "hostssl all md5user 127.0.0.1/32 md5",
                  "hostssl all all 127.0.0.1/32 scram-sha-256"],
            files: files)
        try cluster.psql("""
            CREATE ROLE batch LOGIN PASSWORD 'scram-pw';
            SET password_encryption = 'md5';
            CREATE ROLE md5user LOGIN PASSWORD 'md5-pw';
            CREATE ROLE trustuser LOGIN;
            CREATE ROLE certuser LOGIN;
            """)
        return Setup(cluster: cluster, ca: folder + "/ca.crt", otherCA: folder + "/other.crt", folder: folder)
    }

    static func shell(_ script: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw PostgresServer.ServerError.failed("bash exited \(process.terminationStatus)") }
    }

    /// An environment with nothing of the caller's: HOME a folder with no ~/.postgresql.
    func environment(_ setup: Setup, _ variables: [String: String] = [:]) -> [String: String] {
        ["HOME": setup.folder, "USER": "nobody"].merging(variables) { $1 }
    }

    /// Connects and reads the session's user, whether it is over TLS and its application name.
    func connect(_ url: String, _ environment: [String: String]) throws -> (user: String, tls: Bool, application: String) {
        let connection = try PostgresBackend.connect(try PostgresLocation(url: url, environment: environment))
        let row = try connection.value("SELECT current_user || '|' || ssl || '|' || current_setting('application_name') "
                                       + "FROM pg_stat_ssl WHERE pid = pg_backend_pid()")?.string ?? ""
        let parts = row.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        return (parts[0], parts[1] == "true", parts[2])
    }

    /// The message a failed connection gives.
    func failure(_ url: String, _ environment: [String: String]) -> String {
        do {
            _ = try PostgresBackend.connect(try PostgresLocation(url: url, environment: environment))
            return "connected"
        } catch {
            return PostgresBackend.describe(error, location: try! PostgresLocation(url: url, environment: environment))
        }
    }

    @Test("verify-full with the right CA: over TLS, SCRAM-SHA-256, application_name batchrun")
    func verifyFull() throws {
        let setup = try Self.setup.get()
        let url = "postgresql://batch@localhost:\(setup.cluster.port)/postgres?sslmode=verify-full&sslrootcert=\(setup.ca)"
        let started = ContinuousClock.now
        let session = try connect(url, environment(setup, ["PGPASSWORD": "scram-pw"]))
        print("connect over TLS (verify-full, SCRAM):", ContinuousClock.now - started)
        #expect(session.user == "batch" && session.tls && session.application == "batchrun")
        let log = try String(contentsOfFile: setup.cluster.folder + "/server.log", encoding: .utf8)
        #expect(log.contains("identity=\"batch\" method=scram-sha-256"))
        // verify-ca checks the CA, not the host name: 127.0.0.1 passes there, not under verify-full.
        let byAddress = "postgresql://batch@127.0.0.1:\(setup.cluster.port)/postgres?sslrootcert=\(setup.ca)"
        #expect(try connect(byAddress + "&sslmode=verify-ca", environment(setup, ["PGPASSWORD": "scram-pw"])).tls)
        let mismatch = failure(byAddress + "&sslmode=verify-full", environment(setup, ["PGPASSWORD": "scram-pw"]))
        #expect(mismatch.contains("certificate is not for host \"127.0.0.1\""), "\(mismatch)")
    }

    @Test("a certificate signed by another CA is refused, saying certificate and why")
    func wrongCA() throws {
        let setup = try Self.setup.get()
        let url = "postgresql://batch@localhost:\(setup.cluster.port)/postgres?sslmode=verify-full&sslrootcert=\(setup.otherCA)"
        let started = ContinuousClock.now
        let message = failure(url, environment(setup, ["PGPASSWORD": "scram-pw"]))
        #expect(message == "the server's certificate is not signed by a CA in sslrootcert \(setup.otherCA) (sslmode=verify-full)", "\(message)")
        #expect(ContinuousClock.now - started < .seconds(5))   // the chain fetched to say why, without waiting
        // verify-ca with no root certificate file at all
        let missing = failure("postgresql://batch@localhost:\(setup.cluster.port)/postgres?sslmode=verify-ca", environment(setup))
        #expect(missing.contains("root certificate file \"\(setup.folder)/.postgresql/root.crt\" does not exist"), "\(missing)")
    }

    @Test("a client certificate (sslcert, sslkey) logs in where pg_hba.conf says cert; without one the server's refusal is quoted")
    func clientCertificate() throws {
        let setup = try Self.setup.get()
        let url = "postgresql://certuser@localhost:\(setup.cluster.port)/postgres?sslmode=verify-full&sslrootcert=\(setup.ca)"
        let session = try connect(url + "&sslcert=\(setup.folder)/client.crt&sslkey=\(setup.folder)/client.key", environment(setup))
        #expect(session.user == "certuser" && session.tls)
        let log = try String(contentsOfFile: setup.cluster.folder + "/server.log", encoding: .utf8)
        #expect(log.contains("identity=\"CN=certuser\" method=cert"), "the server's log shows no cert login")
        // PGSSLCERT and PGSSLKEY name them as well.
        let fromEnvironment = try connect(url, environment(setup, ["PGSSLCERT": "\(setup.folder)/client.crt", "PGSSLKEY": "\(setup.folder)/client.key"]))
        #expect(fromEnvironment.user == "certuser")
        let without = failure(url, environment(setup))
        #expect(without.contains("the server refused the connection") && without.contains("certificate"), "\(without)")
    }

    @Test("a server certificate that expired is refused, saying certificate, expired and when")
    func expiredCertificate() throws {
        let setup = try Self.setup.get()
        let cluster = try PostgresServer.start(settings: ["ssl = on", "ssl_cert_file = 'server.crt'", "ssl_key_file = 'server.key'"],
                                               files: setup.folder + "/expired-files")
        defer { try? cluster.stop() }
        let url = "postgresql://postgres@localhost:\(cluster.port)/postgres?sslmode=verify-full&sslrootcert=\(setup.ca)"
        let message = failure(url, environment(setup))
        #expect(message.contains("certificate expired on 2020-01-02"), "\(message)")
        #expect(message.contains("sslmode=verify-full"), "\(message)")
        // Not verified (require, no root certificate), the expired certificate is taken, as libpq takes it.
        #expect(try connect("postgresql://postgres@localhost:\(cluster.port)/postgres?sslmode=require", environment(setup)).tls)
    }

    @Test("without TLS the server refuses, and the message quotes it")
    func plainRefused() throws {
        let setup = try Self.setup.get()
        let message = failure("postgresql://batch@127.0.0.1:\(setup.cluster.port)/postgres?sslmode=disable", environment(setup, ["PGPASSWORD": "scram-pw"]))
        #expect(message.contains("the server refused the connection: no pg_hba.conf entry for host \"127.0.0.1\", user \"batch\", database \"postgres\", no encryption"),
                "\(message)")
        // allow: without TLS first, then over TLS (libpq's order), which the server takes.
        #expect(try connect("postgresql://batch@127.0.0.1:\(setup.cluster.port)/postgres?sslmode=allow", environment(setup, ["PGPASSWORD": "scram-pw"])).tls)
        // prefer (the default) takes TLS at once.
        #expect(try connect("postgresql://batch@127.0.0.1:\(setup.cluster.port)/postgres", environment(setup, ["PGPASSWORD": "scram-pw"])).tls)
    }

    @Test("require against a server without TLS says so; prefer goes on without TLS there")
    func serverWithoutTLS() throws {
        let setup = try Self.setup.get()
        let server = try PostgresServer.url   // the shared throwaway server: ssl off, trust
        let message = failure(server + "?sslmode=require", environment(setup))
        let location = try PostgresLocation(url: server, environment: environment(setup))
        #expect(message == "the server at \(location) does not do TLS (sslmode=require)", "\(message)")
        #expect(try connect(server, environment(setup)).tls == false)
    }

    @Test("a wrong password says so")
    func wrongPassword() throws {
        let setup = try Self.setup.get()
        let url = "postgresql://batch@localhost:\(setup.cluster.port)/postgres?sslmode=verify-full&sslrootcert=\(setup.ca)"
        let message = failure(url, environment(setup, ["PGPASSWORD": "wrong"]))
        #expect(message == "the server refused the connection: password authentication failed for user \"batch\"", "\(message)")
        let none = failure(url, environment(setup))
        #expect(none.contains("the server asks a password of user \"batch\" and none was given"), "\(none)")
    }

    @Test("a connection from PG* variables alone")
    func environmentOnly() throws {
        let setup = try Self.setup.get()
        let variables = ["PGHOST": "localhost", "PGPORT": "\(setup.cluster.port)", "PGUSER": "batch", "PGDATABASE": "postgres",
                         "PGPASSWORD": "scram-pw", "PGSSLMODE": "verify-full", "PGSSLROOTCERT": setup.ca, "PGAPPNAME": "from-env",
                         "PGCONNECT_TIMEOUT": "5"]
        let session = try connect("postgresql://", environment(setup, variables))
        #expect(session.user == "batch" && session.tls && session.application == "from-env")
    }

    @Test(".pgpass over the cluster's Unix socket (?host=DIR): SCRAM, no TLS on a socket")
    func passFileOverSocket() throws {
        let setup = try Self.setup.get()
        let pgpass = setup.folder + "/pgpass-socket"
        try "\(setup.cluster.folder):\(setup.cluster.port):postgres:batch:scram-pw\n".write(toFile: pgpass, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: pgpass)   // libpq ignores a file others may read
        let url = "postgresql://batch@:\(setup.cluster.port)/postgres?host=\(setup.cluster.folder)"
        let session = try connect(url, environment(setup, ["PGPASSFILE": pgpass]))
        #expect(session.user == "batch" && !session.tls)
        #expect(try PostgresLocation(url: url, environment: environment(setup)).description
                == "postgresql://batch@:\(setup.cluster.port)/postgres?host=\(setup.cluster.folder)")
    }

    @Test("a service file names the server, user, database and TLS settings")
    func serviceFile() throws {
        let setup = try Self.setup.get()
        let services = setup.folder + "/services-\(UUID().uuidString).conf"
        try """
            [nightly]
            host=localhost
            port=\(setup.cluster.port)
            user=batch
            dbname=postgres
            sslmode=verify-full
            sslrootcert=\(setup.ca)
            application_name=from-service
            """.write(toFile: services, atomically: true, encoding: .utf8)
        let variables = ["PGSERVICEFILE": services, "PGPASSWORD": "scram-pw", "PGSYSCONFDIR": setup.folder]
        let session = try connect("postgresql://?service=nightly", environment(setup, variables))
        #expect(session.user == "batch" && session.tls && session.application == "from-service")
        let byVariable = try connect("postgresql://", environment(setup, variables.merging(["PGSERVICE": "nightly"]) { $1 }))
        #expect(byVariable.user == "batch" && byVariable.tls)
    }

    @Test("a COPY over TLS whose session the server ends at random moments (pg_terminate_backend, 25 times) fails as a lost connection and never stops this process (PostgresNIO's copy precondition: over TLS the channel stays open while its state machine is already closing)")
    func copyEndedOverTLS() throws {
        let setup = try Self.setup.get()
        let database = "copy_tls_\(UInt32.random(in: 0...UInt32.max))"
        _ = try setup.cluster.psql("CREATE DATABASE \(database) OWNER trustuser")
        let url = "postgresql://trustuser@localhost:\(setup.cluster.port)/\(database)?sslmode=verify-full&sslrootcert=\(setup.ca)"
        let store = try Store(postgres: url, model: PostgresStoreTests.model)
        let entity = PostgresStoreTests.model["Reading"]!
        let rowsPerCall = 10_000
        var lost = 0, done = 0
        for attempt in 0..<25 {
            var batch = RowBatch()
            for row in 0..<rowsPerCall {
                batch.beginRow(line: row + 1, layout: 0)
                batch.append(.integer(Int64(attempt * rowsPerCall + row)))
                batch.append(.text("sensor \(row) with some text to make the rows longer"))
                batch.append(.real(Double(row) / 7))
                batch.append(.text("s"))
            }
            // Ends the writer's session (the one in a write transaction) after 0-60 ms.
            let ender = Thread {
                Thread.sleep(forTimeInterval: Double.random(in: 0...0.06))
                _ = try? setup.cluster.psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                            + "WHERE datname = '\(database)' AND backend_xid IS NOT NULL")
            }
            ender.start()
            do {
                let outcome = try store.backend.write(interruptedBy: nil) { connection in
                    try PostgresBulkLoader(entity: entity).insert(Array(0..<rowsPerCall)[...], of: batch, layout: 0,
                                                                  columns: ["id", "sensor", "value", "status"],
                                                                  assigningKeys: false, in: connection).outcome
                }
                #expect(outcome.isDone)
                done += 1
            } catch {
                #expect(StoreFailure(of: error) == .connectionLost, "\(error)")
                lost += 1
            }
            while !ender.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(lost > 0, "no COPY met its session's end (\(done) went through)")
        // What went through is whole: every committed call's rows, nothing of the others.
        let stored = try store.backend.read(interruptedBy: nil) { connection in
            try connection.value("SELECT count(*) FROM \"Reading\"")
        }
        #expect(stored == .integer(Int64(done * rowsPerCall)))
    }

    @Test("md5 and trust logins")
    func md5AndTrust() throws {
        let setup = try Self.setup.get()
        func url(_ user: String) -> String { "postgresql://\(user)@localhost:\(setup.cluster.port)/postgres?sslmode=verify-full&sslrootcert=\(setup.ca)" }
        let md5 = try connect(url("md5user"), environment(setup, ["PGPASSWORD": "md5-pw"]))
        #expect(md5.user == "md5user" && md5.tls)
        let log = try String(contentsOfFile: setup.cluster.folder + "/server.log", encoding: .utf8)
        #expect(log.contains("identity=\"md5user\" method=md5"))
        let wrong = failure(url("md5user"), environment(setup, ["PGPASSWORD": "nope"]))
        #expect(wrong.contains("password authentication failed for user \"md5user\""), "\(wrong)")
        let trust = try connect(url("trustuser"), environment(setup))
        #expect(trust.user == "trustuser" && trust.tls)
    }

    @Test("a server that never answers: connect_timeout ends the wait, saying so")
    func connectTimeout() throws {
        // A listening socket nobody accepts on: the kernel completes the TCP handshake and the
        // client waits for an answer that never comes.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                guard bind(listener, raw, length) == 0, listen(listener, 8) == 0, getsockname(listener, raw, &length) == 0 else {
                    throw PostgresServer.ServerError.failed("cannot listen")
                }
            }
        }
        let port = Int(UInt16(bigEndian: address.sin_port))
        let started = ContinuousClock.now
        let message = failure("postgresql://batch@127.0.0.1:\(port)/postgres?connect_timeout=2&sslmode=disable", [:])
        let waited = ContinuousClock.now - started
        #expect(message.contains("no answer within 2 s"), "\(message)")
        #expect(waited >= .seconds(1.5) && waited < .seconds(6), "\(waited)")
        let refused = failure("postgresql://batch@127.0.0.1:1/postgres", [:])
        #expect(refused == "cannot reach the server at postgresql://batch@127.0.0.1:1/postgres (Connection refused)", "\(refused)")
    }
}
