import Foundation
import Testing
import TestSupport

/// A confined worker (JOBFILE.md section 15, "A confined worker"), tried as a stranger would try
/// it, end to end with the real binary: a PostgreSQL cluster of its own with password logins and
/// the roles of docs/postgresql.md, a worker with `PGPASSWORD`, an AWS secret and a feed token in
/// its environment, and items that reach for them. Each refusal is an invalid item (`failed`,
/// exit 2) naming what it refused and the option that would allow it, and the secrets appear in
/// no log, report or listing.
@Suite("A confined worker: PostgreSQL", .serialized)
struct ConfinedWorkerTests {
    static let workerPassword = "w0rker-pa55-XYZZY"
    static let awsSecret = "aws-secret-PLUGH"
    static let feedToken = "feed-token-FROTZ"

    /// A cluster with password logins (scram) on 127.0.0.1, the worker and submit roles of
    /// docs/postgresql.md, the queue's database `jobs` and a database `secrets` the worker role
    /// may read, which items must not.
    struct Setup {
        let cluster: PostgresServer.Cluster
        let worker: String
        let submit: String
        let secrets: String
        let superuser: String
        let folder: TemporaryFolder

        /// The worker's environment: its password and two secrets an item must not see.
        var environment: [String: String] {
            ["PGPASSWORD": ConfinedWorkerTests.workerPassword, "AWS_SECRET_ACCESS_KEY": ConfinedWorkerTests.awsSecret,
             "FEED_TOKEN": ConfinedWorkerTests.feedToken]
        }

        func run(_ arguments: [String], password: String = ConfinedWorkerTests.workerPassword) throws -> Batchrun.Result {
            var environment = environment
            environment["PGPASSWORD"] = password
            return try Batchrun.run(arguments, in: folder.url, environment: environment)
        }

        /// Submits `text` as the submit role; its item id.
        @discardableResult
        func submit(_ name: String, _ text: String) throws -> String {
            try folder.write(name, text)
            let submitted = try run(["submit", submit, name], password: "subm1t-pw")
            #expect(submitted.status == 0, "\(submitted.stderr)")
            return try #require(submitted.stdout.split(separator: " ").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) })
        }

        /// Everything a submitter can read of the queue: the listing, as text and JSON, and each item's log and report.
        func everythingSubmittersSee() throws -> String {
            var seen = try run(["queue", submit], password: "subm1t-pw").stdout
            seen += try run(["queue", submit, "--format", "json"], password: "subm1t-pw").stdout
            seen += try cluster.psql("SELECT string_agg(coalesce(log, '') || coalesce(report, '') || coalesce(error, ''), '') FROM _batchrun_queue",
                                     database: "jobs")
            return seen
        }

        func stop() {
            try? cluster.stop()
        }
    }

    static func start() throws -> Setup {
        let cluster = try PostgresServer.start(hba: ["local all postgres trust", "host all all 127.0.0.1/32 scram-sha-256"])
        try cluster.psql("CREATE DATABASE jobs")
        try cluster.psql("CREATE DATABASE secrets")
        try cluster.psql("""
            CREATE ROLE batchrun_worker LOGIN PASSWORD '\(workerPassword)';
            CREATE ROLE batchrun_submit LOGIN PASSWORD 'subm1t-pw';
            GRANT CONNECT ON DATABASE jobs TO batchrun_worker, batchrun_submit;
            GRANT CONNECT ON DATABASE secrets TO batchrun_worker;
            """)
        try cluster.psql("""
            GRANT USAGE, CREATE ON SCHEMA public TO batchrun_worker;
            GRANT USAGE ON SCHEMA public TO batchrun_submit;
            """, database: "jobs")
        try cluster.psql("""
            CREATE TABLE payroll (id integer primary key, salary text);
            INSERT INTO payroll VALUES (1, 'salary-XYZZY-1');
            GRANT SELECT ON payroll TO batchrun_worker;
            """, database: "secrets")
        let server = "postgresql://batchrun_worker@127.0.0.1:\(cluster.port)"
        let setup = Setup(cluster: cluster, worker: server + "/jobs",
                          submit: "postgresql://batchrun_submit@127.0.0.1:\(cluster.port)/jobs", secrets: server + "/secrets",
                          superuser: "postgresql://postgres@127.0.0.1:\(cluster.port)/jobs", folder: try TemporaryFolder())
        // As docs/postgresql.md says: the worker role makes the queue's table, then grants the
        // submit role the submission's columns.
        let made = try setup.run(["queue", setup.worker])
        #expect(made.status == 0, "\(made.stderr)")
        try cluster.psql("""
            SET ROLE batchrun_worker;
            GRANT SELECT, INSERT (name, job_text, params, directory, priority, run_at, state, max_attempts, backoff, unique_key,
                                  item_group, batch, role, part)
                ON _batchrun_queue TO batchrun_submit;
            GRANT SELECT, INSERT (job, name, job_text, params, directory, priority, max_attempts, backoff, item_group,
                                  parts, part_count, parts_queued, has_completion)
                ON _batchrun_batch TO batchrun_submit;
            GRANT SELECT ON _batchrun_group, _batchrun_pause TO batchrun_submit;
            GRANT USAGE ON SEQUENCE _batchrun_queue_id_seq, _batchrun_batch_id_seq TO batchrun_submit;
            """, database: "jobs")
        return setup
    }

    /// A job file on `store` that fetches `select` (with step params `params`) to the log.
    static func item(store: String, entity: String = "T", columns: String = "id: integer primary key",
                     params: String = "{}", select: String = "{ id: id }") -> String {
        """
        version: 1
        store: { postgres: "\(store)" }
        entities:
          \(entity): { columns: { \(columns) } }
        jobs:
          peek:
            steps:
              - fetch: { entity: \(entity), params: \(params), select: \(select), output: "-" }
        """
    }

    @Test("${env.NAME}: the worker's password and AWS secret are refused (invalid, naming the variable and --allow-env), in params and in headers; an allowed variable is read")
    func environment() throws {
        let setup = try Self.start()
        defer { setup.stop() }
        let feeds = try HTTPFeedServer(root: setup.folder.path("."))
        defer { feeds.stop() }
        try setup.folder.write("t.csv", "id\n1\n")
        try setup.submit("env.yaml", Self.item(store: setup.worker, params: #"{ p: "${env.PGPASSWORD}", a: "${env.AWS_SECRET_ACCESS_KEY}" }"#,
                                                select: #"{ leak: ":p", aws: ":a" }"#))
        try setup.submit("header.yaml", """
            version: 1
            store: { postgres: "\(setup.worker)" }
            entities:
              T: { columns: { id: integer primary key } }
            jobs:
              load:
                steps:
                  - insert: { entity: T, from: "\(feeds.url)/t.csv", headers: { X-Leak: "${env.PGPASSWORD}" } }
            """)
        let refused = try setup.run(["worker", setup.worker, "--once", "--root", setup.folder.path(".")])
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        let logs = try setup.cluster.psql("SELECT string_agg(log, '|' ORDER BY id) FROM _batchrun_queue", database: "jobs")
        #expect(logs.contains("${env.PGPASSWORD}: this worker lets items read only the environment variables named with --allow-env"), "\(logs)")
        #expect(logs.contains("start the worker with --allow-env AWS_SECRET_ACCESS_KEY"), "\(logs)")
        #expect(logs.contains("header X-Leak: ${env.PGPASSWORD}"), "\(logs)")
        #expect(try setup.cluster.psql("SELECT string_agg(state, ',') FROM _batchrun_queue", database: "jobs") == "failed,failed")
        #expect(feeds.requests.isEmpty, "\(feeds.requests)")
        let seen = try setup.everythingSubmittersSee()
        #expect(!seen.contains(Self.workerPassword) && !seen.contains(Self.awsSecret))

        // Allowed by name: the feed token is read, the password still is not.
        try setup.submit("allowed.yaml", Self.item(store: setup.worker, params: #"{ t: "${env.FEED_TOKEN}" }"#, select: #"{ token: ":t" }"#))
        try setup.cluster.psql("CREATE TABLE t (id integer primary key); INSERT INTO t VALUES (1); ALTER TABLE t OWNER TO batchrun_worker",
                               database: "jobs")
        let allowed = try setup.run(["worker", setup.worker, "--once", "--root", setup.folder.path("."), "--allow-env", "FEED_TOKEN"])
        #expect(allowed.status == 0, "\(allowed.stdout)\(allowed.stderr)")
        let log = try setup.cluster.psql("SELECT log FROM _batchrun_queue WHERE name = 'allowed.yaml'", database: "jobs")
        #expect(log.contains(Self.feedToken), "\(log)")
    }

    @Test("a submit-only role (the documented grants) queues and lists a fan-out batch, which a confined worker runs; a part it forges, naming a file its glob does not list, fails as invalid, reading nothing")
    func fanOut() throws {
        let setup = try Self.start()
        defer { setup.stop() }
        for part in 1...3 { try setup.folder.write("data/part-\(part).csv", "id\n\(part)\n") }
        try setup.folder.write("outside.csv", "id\n99\n")
        try setup.folder.write("batch.yaml", """
            version: 1
            store: { postgres: "\(setup.worker)" }
            entities:
              T: { columns: { id: integer primary key } }
            jobs:
              load:
                steps:
                  - insert: { entity: T, from: "\(setup.folder.path("data"))/part-*.csv" }
            """)
        let submitted = try setup.run(["submit", setup.submit, "batch.yaml", "--fan-out", "load", "--group", "g"], password: "subm1t-pw")
        #expect(submitted.status == 0 && submitted.stdout.contains("queued batch 1: 3 parts of load"), "\(submitted.stdout)\(submitted.stderr)")
        let ran = try setup.run(["worker", setup.worker, "--once", "--root", setup.folder.path(".")])
        #expect(ran.status == 0, "\(ran.stdout)\(ran.stderr)")
        #expect(try setup.cluster.psql("SELECT string_agg(id::text, ',' ORDER BY id) FROM t", database: "jobs") == "1,2,3")
        let listed = try setup.run(["queue", setup.submit, "--batch", "1"], password: "subm1t-pw")
        #expect(listed.stdout.contains("load  3 parts: done 3  3 rows"), "\(listed.stdout)\(listed.stderr)")

        // A part the submitter names itself: the worker refuses it before reading anything.
        let forged = #"{"batch":1,"role":{"part":{"job":"load","part":{"modified":0,"name":"\#(setup.folder.path("outside.csv"))","size":6}}}}"#
        try setup.cluster.psql("""
            SET ROLE batchrun_submit;
            INSERT INTO _batchrun_queue (name, job_text, params, directory, batch, role, part)
            SELECT name, job_text, params, directory, 1, '\(forged)', 'outside.csv' FROM _batchrun_queue WHERE id = 1;
            """, database: "jobs")
        let refused = try setup.run(["worker", setup.worker, "--once", "--root", setup.folder.path(".")])
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        let log = try setup.cluster.psql("SELECT log FROM _batchrun_queue WHERE part = 'outside.csv'", database: "jobs")
        #expect(log.contains("is not one") && log.contains("part-*.csv lists"), "\(log)")
        #expect(try setup.cluster.psql("SELECT count(*) FROM t WHERE id = 99", database: "jobs") == "0")

        // A row that says it is of another's batch (its needs item not run yet) does not let the batch go on when it ends.
        try setup.folder.write("needs.yaml", """
            version: 1
            store: { postgres: "\(setup.worker)" }
            entities:
              T: { columns: { id: integer primary key } }
            jobs:
              first: { steps: [{ fetch: { entity: T } }] }
              load:
                needs: [first]
                steps:
                  - insert: { entity: T, from: "\(setup.folder.path("data"))/part-*.csv" }
            """)
        let later = try setup.run(["submit", setup.submit, "needs.yaml", "--fan-out", "load", "--in", "1h"], password: "subm1t-pw")
        #expect(later.status == 0 && later.stdout.contains("queued batch 2: 3 parts of load"), "\(later.stdout)\(later.stderr)")
        let joinedText = """
            version: 1
            store: { postgres: "\(setup.worker)" }
            entities:
              T: { columns: { id: integer primary key } }
            jobs:
              first: { steps: [{ fetch: { entity: T } }] }
              load: { needs: [first], steps: [{ fetch: { entity: T } }] }
            """
        try setup.cluster.psql("""
            SET ROLE batchrun_submit;
            INSERT INTO _batchrun_queue (name, job_text, params, directory, batch, role)
            VALUES ('joined.yaml', $forged$\(joinedText)$forged$, '{}', '\(setup.folder.path("."))', 2, '{"batch":2,"role":{"needs":{"job":"load"}}}');
            """, database: "jobs")
        #expect(throws: (any Error).self) {   // a role that is not JSON naming a batch is refused by the table's check
            try setup.cluster.psql("SET ROLE batchrun_submit; INSERT INTO _batchrun_queue (name, job_text, params, directory, role) "
                                   + "VALUES ('x.yaml', 'x', '{}', '/', 'not json')", database: "jobs")
        }
        let joined = try setup.run(["worker", setup.worker, "--once", "--root", setup.folder.path(".")])
        #expect(joined.status == 0, "\(joined.stdout)\(joined.stderr)")
        #expect(try setup.cluster.psql("SELECT state FROM _batchrun_queue WHERE name = 'joined.yaml'", database: "jobs") == "done")
        let held = try setup.run(["queue", setup.submit, "--batch", "2"], password: "subm1t-pw")
        #expect(held.stdout.contains("3 parts: waiting 3"), "\(held.stdout)\(held.stderr)")
    }

    @Test("store: another database, the superuser, or another host is refused before anything connects (invalid, naming --allow-store); --allow-store lets one in")
    func stores() throws {
        let setup = try Self.start()
        defer { setup.stop() }
        try setup.submit("secrets.yaml", Self.item(store: setup.secrets, entity: "payroll", columns: "id: integer primary key, salary: text",
                                                    select: "{ salary: salary }"))
        try setup.submit("superuser.yaml", Self.item(store: setup.superuser))
        // Another server: refused before it is offered the worker's password (nothing listens there).
        try setup.submit("elsewhere.yaml", Self.item(store: "postgresql://batchrun_worker@127.0.0.2:\(setup.cluster.port)/jobs"))
        let refused = try setup.run(["worker", setup.worker, "--once", "--root", setup.folder.path(".")])
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        let logs = try setup.cluster.psql("SELECT string_agg(log, '|' ORDER BY id) FROM _batchrun_queue", database: "jobs")
        #expect(logs.components(separatedBy: "a confined worker lets an item use only the queue's own database").count == 4, "\(logs)")
        #expect(logs.contains("start the worker with --allow-store URL"), "\(logs)")
        #expect(try setup.cluster.psql("SELECT string_agg(state, ',') FROM _batchrun_queue", database: "jobs") == "failed,failed,failed")
        let seen = try setup.everythingSubmittersSee()
        #expect(!seen.contains("salary-XYZZY-1") && !seen.contains(Self.workerPassword))

        try setup.submit("secrets-allowed.yaml", Self.item(store: setup.secrets, entity: "payroll", columns: "id: integer primary key, salary: text",
                                                            select: "{ salary: salary }"))
        let allowed = try setup.run(["worker", setup.worker, "--once", "--root", setup.folder.path("."), "--allow-store", setup.secrets])
        #expect(allowed.status == 0, "\(allowed.stdout)\(allowed.stderr)")
        #expect(try setup.cluster.psql("SELECT log FROM _batchrun_queue WHERE name = 'secrets-allowed.yaml'", database: "jobs")
            .contains("salary-XYZZY-1"))
    }

    @Test("queue rows: the submit role may insert only the submission's columns, and the CHECKs refuse a forged finished or running item and out-of-range values")
    func forgedRows() throws {
        let setup = try Self.start()
        defer { setup.stop() }
        let submit = "host=127.0.0.1 port=\(setup.cluster.port) user=batchrun_submit dbname=jobs password=subm1t-pw"
        func insert(_ sql: String) -> String {
            (try? PostgresServer.psql(submit, sql)).map { "inserted: \($0)" } ?? "refused"
        }
        #expect(insert("INSERT INTO _batchrun_queue (name, job_text, directory, state, log) VALUES ('x', 'x', '/', 'done', 'forged log')") == "refused")
        #expect(insert("INSERT INTO _batchrun_queue (name, job_text, directory, state) VALUES ('x', 'x', '/', 'done')") == "refused")
        #expect(insert("INSERT INTO _batchrun_queue (name, job_text, directory, state) VALUES ('x', 'x', '/', 'running')") == "refused")
        #expect(insert("INSERT INTO _batchrun_queue (name, job_text, directory, priority) VALUES ('x', 'x', '/', 9223372036854775807)") == "refused")
        #expect(insert("INSERT INTO _batchrun_queue (name, job_text, directory, max_attempts) VALUES ('x', 'x', '/', 0)") == "refused")
        #expect(try setup.cluster.psql("SELECT count(*) FROM _batchrun_queue", database: "jobs") == "0")
        // What `submit` inserts is allowed.
        #expect(insert("INSERT INTO _batchrun_queue (name, job_text, directory) VALUES ('x', 'x', '/')").hasPrefix("inserted"))
    }

    @Test("a schema change made by an item takes no right away from the submit role: it still submits and lists")
    func schemaChangeKeepsSubmitRights() throws {
        let setup = try Self.start()
        defer { setup.stop() }
        try setup.submit("make.yaml", Self.item(store: setup.worker))
        try setup.submit("grow.yaml", Self.item(store: setup.worker, columns: "id: integer primary key, added: text"))
        let worked = try setup.run(["worker", setup.worker, "--once", "--root", setup.folder.path(".")])
        #expect(worked.status == 0, "\(worked.stdout)\(worked.stderr)")
        #expect(try setup.cluster.psql("SELECT count(*) FROM _batchrun_schema", database: "jobs") != "0")
        try setup.submit("after.yaml", Self.item(store: setup.worker))
        let listed = try setup.run(["queue", setup.submit], password: "subm1t-pw")
        #expect(listed.status == 0 && listed.stdout.contains("pending 1"), "\(listed.stdout)\(listed.stderr)")
    }

    @Test("--item-role: an item's SQL runs as that role, reading no table of the worker's; its own tables and the run state work; set_config and _batchrun_ are refused")
    func itemRole() throws {
        let setup = try Self.start()
        defer { setup.stop() }
        try setup.cluster.psql("""
            CREATE ROLE batchrun_items NOLOGIN;
            GRANT batchrun_items TO batchrun_worker;
            GRANT USAGE, CREATE ON SCHEMA public TO batchrun_items;
            SET ROLE batchrun_worker;
            CREATE TABLE wages (id integer primary key, wage text);
            INSERT INTO wages VALUES (1, 'wage-XYZZY-1');
            """, database: "jobs")
        let wages = Self.item(store: setup.worker, entity: "wages", columns: "id: integer primary key, wage: text", select: "{ wage: wage }")
        // Without --item-role the item reads what the worker's user may: the finding.
        try setup.submit("before.yaml", wages)
        let before = try setup.run(["worker", setup.worker, "--once", "--root", setup.folder.path(".")])
        #expect(before.status == 0, "\(before.stdout)\(before.stderr)")
        #expect(try setup.cluster.psql("SELECT log FROM _batchrun_queue WHERE name = 'before.yaml'", database: "jobs").contains("wage-XYZZY-1"))

        try setup.submit("wages.yaml", wages)
        try setup.submit("mine.yaml", """
            version: 1
            store: { postgres: "\(setup.worker)" }
            entities:
              Mine: { columns: { id: integer primary key, note: text } }
            jobs:
              fill:
                steps:
                  - insert: { entity: Mine, rows: [{ id: 1, note: own-row }] }
                  - fetch: { entity: Mine, select: { note: note, who: "current_user" }, output: "-" }
            """)
        try setup.submit("escape.yaml", Self.item(store: setup.worker, entity: "Mine", columns: "id: integer primary key, note: text",
                                                  select: #"{ r: "set_config('role', 'batchrun_worker', false)" }"#))
        try setup.submit("queue.yaml", Self.item(store: setup.worker, entity: "Mine", columns: "id: integer primary key, note: text",
                                                 select: #"{ n: "(SELECT count(*) FROM _batchrun_queue)" }"#))
        // A batch-update's expressions are the item's SQL too (its statement has batchrun's own aliases).
        try setup.submit("update.yaml", """
            version: 1
            store: { postgres: "\(setup.worker)" }
            entities:
              Mine: { columns: { id: integer primary key, note: text } }
            jobs:
              steal:
                steps:
                  - batch-update: { entity: Mine, set: { note: "(SELECT string_agg(wage, ',') FROM wages)" } }
                  - fetch: { entity: Mine, select: { note: note }, output: "-" }
            """)
        let worked = try setup.run(["worker", setup.worker, "--once", "--root", setup.folder.path("."), "--item-role", "batchrun_items"])
        #expect(worked.status == 2, "\(worked.stdout)\(worked.stderr)")
        func item(_ name: String) throws -> String {
            try setup.cluster.psql("SELECT state || ': ' || coalesce(log, '') FROM _batchrun_queue WHERE name = '\(name)'", database: "jobs")
        }
        let refused = try item("wages.yaml")
        #expect(refused.hasPrefix("failed") && refused.contains("permission denied for table wages"), "\(refused)")
        #expect(!refused.contains("wage-XYZZY-1"))
        let mine = try item("mine.yaml")
        #expect(mine.hasPrefix("done") && mine.contains("own-row") && mine.contains("batchrun_items"), "\(mine)")
        #expect(try setup.cluster.psql("SELECT tableowner FROM pg_tables WHERE tablename = 'mine'", database: "jobs") == "batchrun_items")
        #expect(try setup.cluster.psql("SELECT tableowner FROM pg_tables WHERE tablename = '_batchrun_runs'", database: "jobs")
                == "batchrun_worker")
        let escape = try item("escape.yaml")
        #expect(escape.hasPrefix("failed") && escape.contains("set_config can change the role the item's SQL runs as"), "\(escape)")
        #expect(escape.contains("nothing was run"))
        let queue = try item("queue.yaml")
        #expect(queue.hasPrefix("failed") && queue.contains("names starting with _batchrun_ are batchrun's own"), "\(queue)")
        let update = try item("update.yaml")
        #expect(update.hasPrefix("failed") && update.contains("permission denied for table wages"), "\(update)")
        #expect(!update.contains("wage-XYZZY-1"))
        #expect(try setup.cluster.psql("SELECT count(*) FROM mine WHERE note LIKE '%wage%'", database: "jobs") == "0")

        // A role that would confine nothing: refused when the worker starts, or when the item's store opens.
        let none = try setup.run(["worker", setup.worker, "--once", "--root", setup.folder.path("."), "--item-role", "none"])
        #expect(none.status == 2 && none.stderr.contains("--item-role takes the name of a role items run as, found 'none'"), "\(none.stderr)")
        try setup.submit("own.yaml", Self.item(store: setup.worker, entity: "Mine", columns: "id: integer primary key, note: text"))
        let own = try setup.run(["worker", setup.worker, "--once", "--root", setup.folder.path("."), "--item-role", "batchrun_worker"])
        #expect(own.status == 1, "\(own.stdout)\(own.stderr)")
        #expect(try item("own.yaml").contains("--item-role batchrun_worker is the worker's own user"))
    }

    /// Runs `command` as the local user `nobody` (setpriv): its exit status and output.
    static func asNobody(_ command: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/sh", "-c", command]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test("another local user (nobody) who plants symlinks in the shared temp folder gets nothing written through them, and cannot enter the worker's own folder")
    func nobodyPlantsSymlinks() throws {
        let setup = try Self.start()
        defer { setup.stop() }
        // A shared temp folder as /tmp is (1777), where nobody plants links to a file of root's,
        // under the names the worker once used (/tmp/batchrun-queue/DATABASE/ID-NAME.log).
        let shared = "/tmp/batchrun-shared-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o1777])
        defer { try? FileManager.default.removeItem(atPath: shared) }
        try setup.folder.write("victim.txt", "untouched\n")
        chmod(setup.folder.path("."), 0o755)
        let victim = setup.folder.path("victim.txt")
        var plant = "mkdir -p \(shared)/batchrun-queue/jobs && cd \(shared)/batchrun-queue/jobs"
        for id in 1...5 {
            for suffix in ["log", "json", ""] { plant += " && ln -s \(victim) \(id)-slow.yaml\(suffix.isEmpty ? "" : "." + suffix)" }
        }
        let planted = try Self.asNobody(plant)
        #expect(planted.status == 0, "\(planted.output)")
        try setup.cluster.psql("CREATE TABLE t (id integer primary key); INSERT INTO t VALUES (1); ALTER TABLE t OWNER TO batchrun_worker",
                               database: "jobs")
        try setup.submit("slow.yaml", Self.item(store: setup.worker, select: #"{ id: id, mark: "'ITEM-MARK-' || id" }"#))
        // The item's process pauses once its item is loaded (BATCHRUN_TEST_PAUSE_AFTER_CHECK), until `go`.
        let pause = setup.folder.path("pause")
        try FileManager.default.createDirectory(atPath: pause, withIntermediateDirectories: true)
        let worker = try Batchrun.start(["worker", setup.worker, "--once", "--root", setup.folder.path(".")], in: setup.folder,
                                        environment: setup.environment.merging(["TMPDIR": shared, "BATCHRUN_TEST_PAUSE_AFTER_CHECK": pause]) { $1 })
        defer { if worker.isRunning { kill(worker.processIdentifier, SIGKILL) } }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, worker.isRunning, !FileManager.default.fileExists(atPath: pause + "/paused") { Thread.sleep(forTimeInterval: 0.05) }
        // While the item runs: the worker's own folder is 0700, root's, and nobody cannot list it.
        let scratch = (try? FileManager.default.contentsOfDirectory(atPath: shared))?.first { $0.hasPrefix("batchrun-") && $0 != "batchrun-queue" }
        let folder = try #require(scratch.map { "\(shared)/\($0)" }, "the worker made no folder of its own under TMPDIR")
        var info = stat()
        #expect(stat(folder, &info) == 0 && info.st_mode & 0o777 == 0o700 && info.st_uid == 0)
        let listed = try Self.asNobody("ls \(folder)")
        #expect(listed.status != 0 && listed.output.contains("Permission denied"), "\(listed)")
        #expect(FileManager.default.createFile(atPath: pause + "/go", contents: nil))
        worker.waitUntilExit()
        #expect(worker.terminationStatus == 0)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "untouched\n")
        #expect(try setup.cluster.psql("SELECT log FROM _batchrun_queue WHERE name = 'slow.yaml'", database: "jobs").contains("ITEM-MARK-"))
    }
}
