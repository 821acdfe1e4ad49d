import Foundation
import Testing
@testable import BatchRunKit
import BatchRunPostgres

/// How a `postgresql://` URL, the service file and the `PG*` environment make a location, as
/// libpq reads them: no server needed.
@Suite("PostgreSQL location: libpq's URL and environment")
struct PostgresLocationTests {
    /// A folder of its own for files a test writes (a service file, `.pgpass`).
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pg-location-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("libpq's defaults: the Unix socket folder, 5432, the user's name as database, prefer, 10 s, batchrun")
    func defaults() throws {
        let location = try PostgresLocation(url: "postgresql://", environment: ["USER": "ann", "HOME": "/home/ann"])
        #expect(location.host == "/var/run/postgresql")
        #expect(location.isUnixSocket)
        #expect(location.socketPath == "/var/run/postgresql/.s.PGSQL.5432")
        #expect(location.port == 5432)
        #expect(location.user == "ann")
        #expect(location.database == "ann")
        #expect(location.sslMode == .prefer)
        #expect(location.sslRootCert == "/home/ann/.postgresql/root.crt")
        #expect(location.sslCert == "/home/ann/.postgresql/postgresql.crt")
        #expect(location.sslKey == "/home/ann/.postgresql/postgresql.key")
        #expect(location.connectTimeout == 10)
        #expect(location.applicationName == "batchrun")
        #expect(location.description == "postgresql://ann@:5432/ann?host=/var/run/postgresql")
    }

    @Test("URL parts and query parameters; a socket folder as ?host= or percent-encoded; IPv6")
    func urlForms() throws {
        let socket = try PostgresLocation(url: "postgresql:///acc?host=/var/run/postgresql", environment: ["USER": "ann"])
        #expect(socket.isUnixSocket && socket.database == "acc" && socket.host == "/var/run/postgresql")
        let encoded = try PostgresLocation(url: "postgresql://%2Ftmp%2Fpg:5433/acc", environment: ["USER": "ann"])
        #expect(encoded.host == "/tmp/pg" && encoded.socketPath == "/tmp/pg/.s.PGSQL.5433")
        let full = try PostgresLocation(url: "postgres://batch@db.internal:6432/nightly?sslmode=verify-full&sslrootcert=/ca.crt"
                                        + "&application_name=night%20run&connect_timeout=3&sslcert=/c.crt&sslkey=/c.key", environment: [:])
        #expect(full.host == "db.internal" && full.port == 6432 && full.user == "batch" && full.database == "nightly")
        #expect(full.sslMode == .verifyFull && full.sslRootCert == "/ca.crt" && full.sslCert == "/c.crt" && full.sslKey == "/c.key")
        #expect(full.applicationName == "night run" && full.connectTimeout == 3)
        #expect(full.description == "postgresql://batch@db.internal:6432/nightly")
        let query = try PostgresLocation(url: "postgresql://?host=db&port=7000&user=u&dbname=d", environment: [:])
        #expect(query.description == "postgresql://u@db:7000/d")
        let v6 = try PostgresLocation(url: "postgresql://u@[::1]:5433/db", environment: [:])
        #expect(v6.host == "::1" && v6.port == 5433 && v6.description == "postgresql://u@[::1]:5433/db")
    }

    @Test("empty parts come from PG* variables; the URL wins over them")
    func environment() throws {
        let environment = ["PGHOST": "db.internal", "PGPORT": "5444", "PGUSER": "batch", "PGDATABASE": "nightly",
                           "PGPASSWORD": "pw", "PGSSLMODE": "require", "PGSSLROOTCERT": "/ca.crt", "PGSSLCERT": "/c.crt",
                           "PGSSLKEY": "/c.key", "PGAPPNAME": "nightly-run", "PGCONNECT_TIMEOUT": "4"]
        let location = try PostgresLocation(url: "postgresql://", environment: environment)
        #expect(location.description == "postgresql://batch@db.internal:5444/nightly")
        #expect(location.password == "pw" && location.sslMode == .require && location.sslRootCert == "/ca.crt")
        #expect(location.sslCert == "/c.crt" && location.sslKey == "/c.key")
        #expect(location.applicationName == "nightly-run" && location.connectTimeout == 4)
        let given = try PostgresLocation(url: "postgresql://ann@other/acc?sslmode=disable&application_name=x", environment: environment)
        #expect(given.description == "postgresql://ann@other:5444/acc" && given.sslMode == .disable && given.applicationName == "x")
    }

    @Test("a service (service= or PGSERVICE) fills what the URL leaves empty, before the environment")
    func serviceFile() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("services.conf")
        try """
            # services
            [other]
            host=elsewhere

            [nightly]
            host = db.internal
            port=6000
            dbname=nightly
            sslmode=verify-ca
            """.write(to: file, atomically: true, encoding: .utf8)
        let environment = ["PGSERVICEFILE": file.path, "PGUSER": "batch", "PGHOST": "ignored", "PGSYSCONFDIR": folder.path]
        let byQuery = try PostgresLocation(url: "postgresql://?service=nightly", environment: environment)
        #expect(byQuery.description == "postgresql://batch@db.internal:6000/nightly" && byQuery.sslMode == .verifyCA)
        var withVariable = environment
        withVariable["PGSERVICE"] = "nightly"
        let byVariable = try PostgresLocation(url: "postgresql:///mine", environment: withVariable)
        #expect(byVariable.description == "postgresql://batch@db.internal:6000/mine")
        // ~/.pg_service.conf when PGSERVICEFILE is not set
        try FileManager.default.copyItem(at: file, to: folder.appendingPathComponent(".pg_service.conf"))
        let home = try PostgresLocation(url: "postgresql://?service=other", environment: ["HOME": folder.path, "USER": "u", "PGSYSCONFDIR": folder.path])
        #expect(home.host == "elsewhere")
        let missing = #expect(throws: StoreError.self) { try PostgresLocation(url: "postgresql://?service=none", environment: environment) }
        #expect("\(missing!)".contains("definition of service \"none\" not found"))
    }

    @Test("a password in the URL is refused, and no message or description shows it")
    func passwordsNeverShown() throws {
        for url in ["postgresql://u:secret@h/db", "postgresql://u@h/db?password=secret"] {
            let error = #expect(throws: StoreError.self) { try PostgresLocation(url: url, environment: [:]) }
            #expect("\(error!)".contains("holds a password"), "\(error!)")
            #expect(!"\(error!)".contains("secret"), "\(error!)")
        }
        let location = try PostgresLocation(url: "postgresql://u@h/db", environment: ["PGPASSWORD": "secret"])
        #expect(location.password == "secret")
        #expect(!location.description.contains("secret") && !location.sessionKey.contains("secret"))
    }

    @Test("libpq's checks: sslmode values, sslrootcert=system takes verify-full, connect_timeout, unknown parameters")
    func checks() throws {
        let mode = #expect(throws: StoreError.self) { try PostgresLocation(url: "postgresql://h/db?sslmode=on", environment: [:]) }
        #expect("\(mode!)".contains("invalid sslmode value: \"on\""))
        #expect(try PostgresLocation(url: "postgresql://h/db?sslrootcert=system", environment: [:]).sslMode == .verifyFull)
        let weak = #expect(throws: StoreError.self) { try PostgresLocation(url: "postgresql://h/db?sslrootcert=system&sslmode=require", environment: [:]) }
        #expect("\(weak!)".contains("weak sslmode \"require\""))
        #expect(try PostgresLocation(url: "postgresql://h/db?connect_timeout=0", environment: [:]).connectTimeout == nil)
        #expect(try PostgresLocation(url: "postgresql://h/db?connect_timeout=1", environment: [:]).connectTimeout == 2)
        #expect(throws: StoreError.self) { try PostgresLocation(url: "postgresql://h/db?connect_timeout=soon", environment: [:]) }
        let unknown = #expect(throws: StoreError.self) { try PostgresLocation(url: "postgresql://h/db?sslcrl=/x", environment: [:]) }
        #expect("\(unknown!)".contains("\"sslcrl\" is not one batchrun supports"))
        #expect(throws: StoreError.self) { try PostgresLocation(url: "postgresql://a,b/db", environment: [:]) }
        #expect(throws: StoreError.self) { try PostgresLocation(url: "postgresql://h:99999/db", environment: [:]) }
        #expect(throws: StoreError.self) { try PostgresLocation(url: "mysql://h/db", environment: [:]) }
    }

    @Test(".pgpass: a socket in the default folder matches localhost, one elsewhere its folder")
    func passFileSockets() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let pgpass = folder.appendingPathComponent("pgpass")
        try "localhost:5432:*:u:default-socket\n/tmp/pg:5433:*:u:other-socket\n".write(to: pgpass, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: pgpass.path)   // libpq ignores a file others may read
        let environment = ["PGPASSFILE": pgpass.path]
        #expect(try PostgresLocation(url: "postgresql://u@/db", environment: environment).password == "default-socket")
        #expect(try PostgresLocation(url: "postgresql://u@:5433/db?host=/tmp/pg", environment: environment).password == "other-socket")
        #expect(try PostgresLocation(url: "postgresql://u@localhost/db", environment: environment).password == "default-socket")
    }

    @Test(".pgpass that the group or others may read or write is ignored, as libpq ignores it; 0600 and 0400 are read")
    func passFilePermissions() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let pgpass = folder.appendingPathComponent("pgpass")
        try "h:5432:*:u:secret\n".write(to: pgpass, atomically: true, encoding: .utf8)
        let environment = ["PGPASSFILE": pgpass.path]
        for (mode, read) in [(0o644, false), (0o640, false), (0o606, false), (0o600, true), (0o400, true)] {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: pgpass.path)
            let password = try PostgresLocation(url: "postgresql://u@h/db", environment: environment).password
            #expect(password == (read ? "secret" : nil), "mode \(String(mode, radix: 8))")
        }
    }
}
