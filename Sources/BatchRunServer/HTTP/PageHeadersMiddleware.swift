import HTTPTypes
import Hummingbird

/// What every answer of `serve` and `worker --metrics` carries: not cached, not sniffed, never
/// framed by another page (its buttons cannot be clicked through a frame). Read-only (no
/// `actions`), any method but GET and HEAD is refused with 405.
///
/// ```swift
/// router.add(middleware: PageHeadersMiddleware<BasicRequestContext>(actions: false))
/// ```
struct PageHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    /// POST is taken (`serve --actions`).
    let actions: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        if request.method == .get || request.method == .head || (actions && request.method == .post) {
            do { response = try await next(request, context) } catch let error as HTTPError {
                response = .text((error.body ?? error.status.reasonPhrase) + "\n", status: error.status)
            }
        } else {
            response = .text(actions ? "GET, HEAD or POST only\n" : "read-only: GET only (actions are off: `serve --actions`)\n",
                             status: .methodNotAllowed)
            response.headers[.allow] = actions ? "GET, HEAD, POST" : "GET, HEAD"
        }
        response.headers[.cacheControl] = "no-store"
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[.contentSecurityPolicy] = "frame-ancestors 'none'"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        return response
    }
}
