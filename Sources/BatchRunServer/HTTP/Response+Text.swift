import Hummingbird

extension Response {
    /// A response of `text`, whole.
    ///
    /// ```swift
    /// return Response.text("not found\n", status: .notFound)
    /// ```
    static func text(_ text: String, contentType: String = "text/plain; charset=utf-8", status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: contentType], body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
