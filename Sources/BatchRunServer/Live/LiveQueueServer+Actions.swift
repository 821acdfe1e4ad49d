import BatchRunKit
import Foundation
import Hummingbird
import HummingbirdAuth

/// `serve --actions`: signing in with a token of `--token-file`, and the actions, each a form
/// POST. Every POST is refused unless it comes from the page itself: its `Origin` (or, without
/// one, its `Referer`) must be this server, and an action's form must carry the session's form
/// token. Not signed in is 401, cross-site 403; either changes nothing. Each action taken is
/// appended to the queue's audit log.
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
            guard sameOrigin(request) else { return refusal(.forbidden, "a request from another site: refused") }
            let form = try await form(of: request)
            guard let who = form.token.flatMap({ tokens?.name(of: $0) }) else {
                return refusal(.unauthorized, "that token is not one of --token-file's: not signed in")
            }
            context.sessions.createSession(PageSession(who: who))
            await record(QueueAuditEntry(who: who, action: "sign-in", item: nil))
            return seeOther("./")
        }
        router.post("/sign-out") { [self] request, context in
            if let refused = check(request, form: try await form(of: request), context: context) { return refused }
            context.sessions.clearSession()
            return seeOther("./")
        }
        router.post("/actions/:action") { [self] request, context in
            let form = try await form(of: request)
            if let refused = check(request, form: form, context: context) { return refused }
            guard let session = context.identity, let action = PageAction(name: context.parameters.get("action") ?? "", form: form.fields) else {
                return refusal(.notFound, "no such action, or its form lacks what it needs")
            }
            let queue = queue
            switch await offTheLoop({ action.perform(on: queue) }) {
            case .done(let item):
                await record(QueueAuditEntry(who: session.who, action: action.name, item: item))
                refresh()
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
    private func check(_ request: Request, form: Form, context: Context) -> Response? {
        guard let session = context.identity else { return refusal(.unauthorized, "not signed in: sign in on the page first") }
        guard sameOrigin(request) else { return refusal(.forbidden, "a request from another site: refused") }
        guard let given = form.formToken, ServeTokens.same(Array(given.utf8), Array(session.formToken.utf8)) else {
            return refusal(.forbidden, "the form's token is not this session's: reload the page and try again")
        }
        return nil
    }

    /// True when the request's `Origin` (else its `Referer`) is this server as the browser reached it.
    private func sameOrigin(_ request: Request) -> Bool {
        guard let host = request.head.authority else { return false }
        let origin = "\(secure ? "https" : "http")://\(host)"
        if let given = request.headers[.origin] { return given == origin }
        if let referer = request.headers[.referer] { return referer == origin || referer.hasPrefix(origin + "/") }
        return false
    }

    private func form(of request: Request) async throws -> Form {
        let body = try await request.body.collect(upTo: 16 * 1024)
        return (try? URLEncodedFormDecoder().decode(Form.self, from: String(buffer: body))) ?? Form()
    }

    private func record(_ entry: QueueAuditEntry) async {
        let queue = queue
        _ = await offTheLoop { try? queue.appendAudit(entry) }
    }

    /// Back to the page (Post/Redirect/Get): a reload does not post again.
    private func seeOther(_ location: String) -> Response {
        Response(status: .seeOther, headers: [.location: location])
    }

    /// A refusal as a small page with the reason and a way back.
    private func refusal(_ status: HTTPResponse.Status, _ reason: String) -> Response {
        var page = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>\(status.code) \(status.reasonPhrase)</title></head>"
        page += "<body><h1>\(status.code) \(status.reasonPhrase)</h1><p class=\"reason\">\(Self.escaped(reason))</p><p><a href=\"/\">back to the queue</a></p></body></html>\n"
        return .text(page, contentType: "text/html; charset=utf-8", status: status)
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
