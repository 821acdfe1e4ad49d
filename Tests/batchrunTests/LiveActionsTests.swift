import Foundation
import GRDB
import Testing
import TestSupport

/// `serve --actions --token-file FILE` (JOBFILE.md 18) on a queue folder and on a real
/// PostgreSQL: the page driven in headless Chromium over the DevTools protocol
/// (Fixtures/devtools.py, a user's clicks, not calls to the handlers), each action's effect
/// checked on the items' states, the audit log and the store's rows; requests from elsewhere
/// refused, changing nothing.
@Suite("the live page's actions, signed in", .serialized)
struct LiveActionsTests {
    static let token = "7f3a9c1e5b2d8f4a6c0e"

    /// A queue with a failed item (its row was there: merge policy `error`), a pending one and a
    /// schedule, and `serve --actions` on it; the test's body, then everything stopped.
    static func withServedQueue(_ kind: String, _ body: (QueueFeatureTests.TestQueue, _ url: String, _ failed: String, _ pending: String) throws -> Void) throws {
        let queue = try QueueFeatureTests.TestQueue(kind)
        let store = queue.folder.path("t.sqlite")
        try QueueFeatureTests.execute(store, "CREATE TABLE T (id INTEGER PRIMARY KEY, v TEXT NOT NULL); INSERT INTO T VALUES (2, 'old')")
        try queue.folder.write("broken.yaml", QueueFeatureTests.insertJob(store: store, id: 2))
        try queue.folder.write("later.yaml", QueueFeatureTests.insertJob(store: store, id: 5))
        try queue.folder.write("nightly.yaml", QueueFeatureTests.insertJob(store: store, id: 7))
        let failed = try queue.submit("broken.yaml")
        _ = try queue.worker(["--once"])
        #expect(try queue.state(failed) == "failed")
        let pending = try queue.submit("later.yaml")
        let scheduled = try Batchrun.run(["schedule", queue.location, "nightly.yaml", "--cron", "0 3 1 1 *", "--name", "nightly"], in: queue.folder.url)
        #expect(scheduled.status == 0, "\(scheduled.stderr)")
        let tokens = try queue.folder.write("operators", "# who may act on the page\nalice \(token)\nbob 0a1b2c3d4e5f6a7b8c9d\n")
        #expect(chmod(tokens, 0o600) == 0)
        let (serve, port) = try LivePageTests.serve(queue.location, in: queue.folder,
                                                    options: ["--listen", "127.0.0.1:0", "--actions", "--token-file", "operators"])
        defer { serve.terminate(); serve.waitUntilExit() }
        try body(queue, "http://127.0.0.1:\(port)/", failed, pending)
    }

    /// The browser's steps (Fixtures/devtools.py); the values of its `eval` steps.
    static func browse(_ steps: [[String: Any]]) throws -> [Any] {
        let browser = try #require(LivePageTests.chromium, "headless Chromium is needed: `make test-deps` installs Debian's chromium")
        let script = Batchrun.packageRoot.appendingPathComponent("Tests/batchrunTests/Fixtures/devtools.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["300", "python3", script, browser, String(decoding: try JSONSerialization.data(withJSONObject: steps), as: UTF8.self)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let answer = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any], "devtools.py said: \(String(decoding: data, as: UTF8.self))")
        #expect(process.terminationStatus == 0 && answer["error"] == nil, "\(answer["error"] ?? "")")
        return answer["results"] as? [Any] ?? []
    }

    /// The audit log's lines as `queue --format json` lists them: "who action item".
    static func audit(_ queue: QueueFeatureTests.TestQueue) throws -> [String] {
        let listed = try Batchrun.run(["queue", queue.location, "--format", "json"], in: queue.folder.url)
        let listing = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any] ?? [:]
        return (listing["audit"] as? [[String: Any]] ?? []).map { entry in
            ["who", "action", "item"].compactMap { entry[$0] as? String }.joined(separator: " ")
        }
    }

    @Test("in headless Chromium: signed in with a token, retry a failed item (its button held down across the page's updates), cancel a pending one, run a schedule now, pause and resume; each in the audit log under the token's name; the retried item's row written once",
          arguments: QueueFeatureTests.kinds)
    func clicks(kind: String) throws {
        try Self.withServedQueue(kind) { queue, url, failed, pending in
            let results = try Self.browse([
                ["open": url],
                ["eval": "document.querySelectorAll('form.action').length"],
                ["type": ["#token", Self.token]],
                ["submit": "form.sign-in button"],
                ["wait_text": ["#session .who", "alice"]],
                ["eval": "document.cookie"],
                // Held down across two of the page's updates (one a second): the click still acts.
                ["submit_held": ["table.failed tr[data-item='\(failed)'] button.act-retry", 2.5]],
                ["wait_gone": "table.failed tr[data-item='\(failed)']"],
                ["submit": "table.pending tr[data-item='\(pending)'] button.act-cancel"],
                ["wait_text": ["table.last-finished tr[data-item='\(pending)']", "cancelled"]],
                ["submit": "table.schedules button.act-run-schedule"],
                ["wait_text": ["table.audit", "run-schedule"]],
                ["submit": "button.act-pause"],
                ["wait": "dd.paused button.act-resume"],
                ["eval": "document.querySelector('dd.paused').textContent"],
                ["submit": "dd.paused button.act-resume"],
                ["wait_gone": "dd.paused"],
                ["eval": "document.querySelector('table.audit').innerText"],
                ["submit": "button.act-sign-out"],
                ["wait": "form.sign-in"],
                ["eval": "document.querySelectorAll('form.action').length"],
            ])
            #expect(results.first as? Int == 0 && results.last as? Int == 0, "no action's form before signing in, nor after signing out")
            #expect(results.dropFirst().first as? String == "", "the session cookie is HttpOnly: the page's scripts cannot read it")
            #expect((results.dropFirst(2).first as? String)?.contains("the whole queue") == true, "\(results)")
            let pageAudit = results.dropLast().last as? String ?? ""
            #expect(pageAudit.contains("alice\tretry\t\(failed)") && pageAudit.contains("alice\tcancel\t\(pending)"), "\(pageAudit)")

            #expect(try queue.state(failed) == "pending", "retried under its identity")
            #expect(try queue.state(pending) == "cancelled")
            let audit = try Self.audit(queue)
            #expect(audit.count == 7 && audit.last == "alice sign-out", "\(audit)")
            #expect(Array(audit.prefix(3)) == ["alice sign-in", "alice retry \(failed)", "alice cancel \(pending)"], "\(audit)")
            #expect(audit.count > 5 && audit[3].hasPrefix("alice run-schedule nightly (item ") && audit[4] == "alice pause" && audit[5] == "alice resume", "\(audit)")
            let listed = try Batchrun.run(["queue", queue.location], in: queue.folder.url)
            #expect(listed.stdout.split(separator: "\n").first?.hasSuffix("(paused)") == false, "resumed: \(listed.stdout)")

            // Mended, the retried item and the schedule's run end done; the cancelled one never ran.
            let store = queue.folder.path("t.sqlite")
            try QueueFeatureTests.execute(store, "DELETE FROM T WHERE id = 2")
            _ = try queue.worker(["--once"])
            #expect(try queue.state(failed) == "done")
            let rows = try DatabaseQueue(path: store).read { db in try Row.fetchAll(db, sql: "SELECT id, v FROM T ORDER BY id") }
            #expect(rows.map { "\($0["id"] as Int64) \($0["v"] as String)" } == ["2 new", "7 new"], "row 2 once, the schedule's row 7, no row 5")
        }
    }

    @Test("refused, nothing changed: a POST without the session cookie (401), with another Origin or without the form's token (403), a GET to an action's URL, a wrong token at sign-in (401); --origin's origin taken; read-only serve takes no POST (405) and has no forms")
    func refusals() throws {
        try Self.withServedQueue("folder") { queue, url, failed, pending in
            let jar = queue.folder.path("cookies")
            let origin = String(url.dropLast())
            #expect(try Self.post(url + "sign-in", ["token": "not-a-token-of-the-file"], origin: origin, jar: jar).status == 401)
            #expect(try Self.post(url + "sign-in", ["token": Self.token], origin: "http://evil.example", jar: jar).status == 403)
            #expect(try Self.post(url + "actions/cancel", ["item": pending], origin: origin, jar: nil).status == 401)
            // Signing in again ends the session signed in before (a new id each time).
            #expect(try Self.post(url + "sign-in", ["token": Self.token], origin: origin, jar: jar).status == 303)
            let before = queue.folder.path("cookies-before")
            try FileManager.default.copyItem(atPath: jar, toPath: before)
            let signedIn = try Self.post(url + "sign-in", ["token": Self.token], origin: origin, jar: jar)
            #expect(signedIn.status == 303 && signedIn.headers.contains("HttpOnly") && signedIn.headers.contains("SameSite=Strict"), "\(signedIn.headers)")
            let stale = try Self.request(url, jar: before).body
            #expect(stale.contains("form class=\"sign-in") || stale.contains("class=\"sign-in\""), "the earlier session is gone")
            let page = try Self.request(url, jar: jar).body
            let formToken = try #require(page.firstMatch(of: /name="form_token" value="([0-9a-f]+)"/).map { String($0.1) })
            #expect(try Self.post(url + "actions/cancel", ["item": pending, "form_token": formToken], origin: "http://evil.example", jar: jar).status == 403)
            #expect(try Self.post(url + "actions/cancel", ["item": pending, "form_token": formToken], origin: "null", jar: jar).status == 403)
            // A name rebound to this address (DNS rebinding): its Host is refused, whatever its Origin.
            let rebound = try Self.post(url + "actions/cancel", ["item": pending, "form_token": formToken], origin: "http://evil.example:80",
                                        jar: jar, extra: ["-H", "Host: evil.example:80"])
            #expect(rebound.status == 421, "\(rebound.status)")
            // A NUL in the item's name: refused, not cut short to another item's name.
            #expect(try Self.post(url + "actions/cancel", [:], origin: origin, jar: jar,
                                  extra: ["--data", "item=\(pending)%00x.yaml&form_token=\(formToken)"]).status == 400)
            #expect(try Self.post(url + "actions/cancel", ["item": pending], origin: origin, jar: jar).status == 403)
            #expect(try Self.post(url + "actions/retry", ["item": failed, "form_token": (formToken.hasPrefix("0") ? "1" : "0") + formToken.dropFirst()], origin: origin, jar: jar).status == 403)
            let viaGet = try Self.request(url + "actions/cancel?item=\(pending)&form_token=\(formToken)", jar: jar)
            #expect(![200, 303].contains(viaGet.status), "\(viaGet.status)")
            #expect(try queue.state(pending) == "pending" && queue.state(failed) == "failed")
            #expect(try Self.audit(queue) == ["alice sign-in", "alice sign-in"])
            // Refused with a reason: retrying a pending item (409), nothing written to the log.
            let conflict = try Self.post(url + "actions/retry", ["item": pending, "form_token": formToken], origin: origin, jar: jar)
            #expect(conflict.status == 409 && conflict.body.contains("only a failed or cancelled item is retried"), "\(conflict.body)")
            #expect(try Self.audit(queue).count == 2)
            // Taken: the same POST from the page itself, as `localhost` names it too.
            let localhost = origin.replacingOccurrences(of: "127.0.0.1", with: "localhost")
            #expect(try Self.post(url + "actions/cancel", ["item": pending, "form_token": formToken], origin: localhost, jar: jar).status == 303)
            #expect(try queue.state(pending) == "cancelled")

            // Behind a TLS proxy: --origin's origin and host are the page's too; HEAD answers as GET does.
            let (proxied, proxiedPort) = try LivePageTests.serve(queue.location, in: queue.folder, options: [
                "--listen", "127.0.0.1:0", "--actions", "--token-file", "operators", "--origin", "https://queue.example.com"])
            defer { proxied.terminate(); proxied.waitUntilExit() }
            let behind = "http://127.0.0.1:\(proxiedPort)/"
            let proxyJar = queue.folder.path("cookies-proxy")
            let viaProxy = try Self.post(behind + "sign-in", ["token": Self.token], origin: "https://queue.example.com", jar: proxyJar,
                                         extra: ["-H", "Host: queue.example.com"])
            #expect(viaProxy.status == 303, "\(viaProxy.status) \(viaProxy.body)")
            #expect(try Self.request(behind, jar: nil, ["-I"]).status == 200)

            let (readOnly, port) = try LivePageTests.serve(queue.location, in: queue.folder)
            defer { readOnly.terminate(); readOnly.waitUntilExit() }
            let plain = "http://127.0.0.1:\(port)/"
            #expect(try Self.post(plain + "actions/retry", ["item": pending], origin: String(plain.dropLast()), jar: nil).status == 405)
            #expect(try !Self.request(plain, jar: nil).body.contains("<form"))
            #expect(try queue.state(pending) == "cancelled")
        }
    }

    @Test("a bad --token-file is exit 2 naming it: readable by others, a short token, a line that is not NAME TOKEN, a name twice; --actions without it")
    func badTokenFiles() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("q/pending"), withIntermediateDirectories: true)
        let cases: [(text: String, mode: mode_t, says: String)] = [
            ("alice \(Self.token)\n", 0o644, "operators: may be read by others (mode 644)"),
            ("alice short\n", 0o600, "operators:1:1: the token of alice is 5 characters: at least 16"),
            ("# operators\n\nalice \(Self.token) extra\n", 0o600, "operators:3:1: expected NAME TOKEN, found 3 fields"),
            ("alice \(Self.token)\nalice 0a1b2c3d4e5f6a7b8c9d\n", 0o600, "operators:2:1: alice is named twice"),
        ]
        for (text, mode, says) in cases {
            let path = try folder.write("operators", text)
            #expect(chmod(path, mode) == 0)
            let result = try Batchrun.run(["serve", "q", "--listen", "127.0.0.1:0", "--actions", "--token-file", "operators"], in: folder.url)
            #expect(result.status == 2 && result.stderr.contains(says), "\(result.stderr)")
        }
        let bare = try Batchrun.run(["serve", "q", "--actions"], in: folder.url)
        #expect(bare.status == 2 && bare.stderr.contains("--actions needs --token-file FILE"), "\(bare.stderr)")
        let everywhere = try Batchrun.run(["serve", "q", "--listen", "0.0.0.0:0", "--insecure-http", "--actions", "--token-file", "operators"], in: folder.url)
        #expect(everywhere.status == 2 && everywhere.stderr.contains("give --origin URL"), "\(everywhere.stderr)")
    }

    /// A form POST through curl (`jar` keeps the session cookie): status, headers, body.
    static func post(_ url: String, _ fields: [String: String], origin: String, jar: String?,
                     extra: [String] = []) throws -> (status: Int, headers: String, body: String) {
        var arguments = ["-H", "Origin: \(origin)"] + extra
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) { arguments += ["--data-urlencode", "\(name)=\(value)"] }
        return try request(url, jar: jar, arguments)
    }

    static func request(_ url: String, jar: String?, _ arguments: [String] = []) throws -> (status: Int, headers: String, body: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "-i", "--max-time", "30"] + (jar.map { ["-b", $0, "-c", $0] } ?? []) + arguments + [url]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let parts = text.components(separatedBy: "\r\n\r\n")
        let status = Int(parts.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        return (status, parts.first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n"))
    }
}
