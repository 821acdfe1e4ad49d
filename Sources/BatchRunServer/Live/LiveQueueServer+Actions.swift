import BatchRunKit
import BatchRunRender
import Foundation
import Hummingbird
import HummingbirdAuth

/// `serve --actions`: signing in with a token of `--token-file`, and the actions, each a form
/// POST. Every POST is refused unless it comes from the page itself: its `Origin` (or, without
/// one, its `Referer`) must be one of `allowedOrigins`, and an action's form must carry the
/// session's form token. Not signed in is 401, cross-site 403; either changes nothing. Each
/// action taken is appended to the queue's audit log.
extension LiveQueueServer {
    /// A form's fields, read from a POST's body (at most 16 KiB).
    private struct Form: Decodable {
        var token: String?
        var formToken: String?
        var item: String?
        var group: String?
        var schedule: String?

        enum CodingKeys: String, CodingKey {
            case token, item, group, schedule
            case formToken = "form_token"
        }

        var fields: [String: String] {
            ["item": item, "group": group, "schedule": schedule].compactMapValues { $0 }
        }
    }

    func addActions(to router: Router<Context>) {
        router.post("/sign-in") { [self] request, context in
            guard sameOrigin(request) else { return refusal(.forbidden, "a request from another site: refused", back: "./") }
            let form = try await form(of: request)
            guard let who = form.token.flatMap({ tokens?.name(of: $0) }) else {
                return refusal(.unauthorized, "that token is not one of --token-file's: not signed in", back: "./")
            }
            // A new session id at each sign-in; the one the browser had (if any) ends.
            _ = try? await sessionStorage.delete(request: request)
            context.sessions.createSession(PageSession(who: who))
            if let unrecorded = await record(QueueAuditEntry(who: who, action: "sign-in", item: nil)) { return unrecorded }
            return seeOther("./")
        }
        router.post("/sign-out") { [self] request, context in
            if let refused = check(request, form: try await form(of: request), context: context, back: "./") { return refused }
            let who = context.identity?.who ?? ""
            context.sessions.clearSession()
            if let unrecorded = await record(QueueAuditEntry(who: who, action: "sign-out", item: nil)) { return unrecorded }
            return seeOther("./")
        }
        router.post("/actions/:action") { [self] request, context in
            let form = try await form(of: request)
            if let refused = check(request, form: form, context: context) { return refused }
            guard let session = context.identity, let action = PageAction(name: context.parameters.get("action") ?? "", form: form.fields) else {
                return refusal(.badRequest, "no such action, or its form lacks what it needs")
            }
            let queue = queue
            switch await offTheLoop({ action.perform(on: queue) }) {
            case .done(let item):
                refresh()
                if let unrecorded = await record(QueueAuditEntry(who: session.who, action: action.name, item: item)) { return unrecorded }
                return seeOther("../")
            case .refused(let reason):
                return refusal(.conflict, reason)
            case .failed(let reason):
                return refusal(.serviceUnavailable, reason)
            }
        }
    }

    /// Why a POST that needs a session is refused, or nil: not signed in (401), or not from the
    /// page itself (403: another origin, or a form without the session's form token).
    private func check(_ request: Request, form: Form, context: Context, back: String = "../") -> Response? {
        guard let session = context.identity else { return refusal(.unauthorized, "not signed in: sign in on the page first", back: back) }
        guard sameOrigin(request) else { return refusal(.forbidden, "a request from another site: refused", back: back) }
        guard let given = form.formToken, ServeTokens.same(Array(given.utf8), Array(session.formToken.utf8)) else {
            return refusal(.forbidden, "the form's token is not this session's: reload the page and try again", back: back)
        }
        return nil
    }

    /// True when the request's `Origin` (else its `Referer`) is one of the page's origins.
    private func sameOrigin(_ request: Request) -> Bool {
        let origins = allowedOrigins
        if let given = request.headers[.origin] { return origins.contains(given.lowercased()) }
        if let referer = request.headers[.referer]?.lowercased() { return origins.contains { referer == $0 || referer.hasPrefix($0 + "/") } }
        return false
    }

    private func form(of request: Request) async throws -> Form {
        let body = try await request.body.collect(upTo: 16 * 1024)
        return (try? URLEncodedFormDecoder().decode(Form.self, from: String(buffer: body))) ?? Form()
    }

    /// Appends to the audit log; a 500 saying what was done but not recorded when it cannot.
    private func record(_ entry: QueueAuditEntry) async -> Response? {
        let queue = queue
        guard let error = await offTheLoop({ () -> String? in
            do { try queue.appendAudit(entry); return nil } catch { return "\(error)" }
        }) else { return nil }
        return refusal(.internalServerError, "\(entry.action) \(entry.item ?? "") was done, but the audit log could not be written: \(error)")
    }

    /// Back to the page (Post/Redirect/Get): a reload does not post again.
    private func seeOther(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    /// A refusal as a small page with the reason and a way back to the page (`back`, relative:
    /// it holds behind a proxy's path).
    private func refusal(_ status: HTTPResponse.Status, _ reason: String, back: String = "../") -> Response {
        var page = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>\(status.code) \(status.reasonPhrase)</title></head>"
        page += "<body><h1>\(status.code) \(status.reasonPhrase)</h1><p class=\"reason\">\(Markup.escape(reason))</p>"
        page += "<p><a href=\"\(back)\">back to the queue</a></p></body></html>\n"
        return .text(page, contentType: "text/html; charset=utf-8", status: status)
    }
}
