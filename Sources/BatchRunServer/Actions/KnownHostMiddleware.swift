import Hummingbird

/// `serve --actions`: a request whose `Host` is none of the page's origins is refused (421), so a
/// page of another site whose name was rebound to this address (DNS rebinding) can neither read
/// the page nor post to it as if it were the page.
///
/// ```swift
/// router.add(middleware: KnownHostMiddleware { ["http://127.0.0.1:8080"] })
/// ```
struct KnownHostMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The allowed origins, `scheme://host[:port]`.
    let origins: @Sendable () -> [String]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let host = request.head.authority?.lowercased() ?? ""
        guard origins().contains(where: { $0.split(separator: "/").last.map(String.init) == host }) else {
            return .text("\(host.isEmpty ? "a request without a Host" : host) is not where this page is served (serve --origin adds a name)\n",
                         status: .misdirectedRequest)
        }
        return try await next(request, context)
    }
}
