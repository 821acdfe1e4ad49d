/// What the server answers to a GET: a status, a content type and a body.
package struct HTTPResponse: Sendable {
    package var status: Int
    package var contentType: String
    package var body: [UInt8]
    /// Server-sent events instead of a body: called every second while the client listens,
    /// each value sent as one event's `data`.
    package var events: (@Sendable () -> String)?

    package init(status: Int = 200, contentType: String, body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }

    package init(status: Int = 200, contentType: String, text: String) {
        self.init(status: status, contentType: contentType, body: Array(text.utf8))
    }

    package static let notFound = HTTPResponse(status: 404, contentType: "text/plain; charset=utf-8", text: "not found\n")
}
