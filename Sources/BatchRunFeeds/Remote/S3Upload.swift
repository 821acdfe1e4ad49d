#if NetworkFeeds
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import Synchronization

/// An output written to `s3://BUCKET/KEY` whole or not at all (section 14): up to `partSize`
/// bytes go up in one PUT at `finish()`; more go up as a multipart upload, part by part as they
/// come, completed only by `finish()` and aborted by `abort()` (a failed or cancelled fetch), so
/// no object appears unless every byte was written. Memory holds one part at most.
///
/// ```swift
/// let upload = try S3Upload(location: S3Location(url: "s3://exports/daily.csv.gz")!, environment: env)
/// try upload.write(bytes)
/// try upload.finish()          // or upload.abort()
/// ```
final class S3Upload {
    /// 8 MiB: S3 takes parts of 5 MiB and more (the last one excepted), and at most 10,000 of them.
    static let defaultPartSize = 8 << 20

    private let requests: S3Requests
    private let client: HTTPClient
    private let partSize: Int
    private var buffer = Data()
    private var uploadID: String?
    private var parts: [String] = []
    private var closed = false

    /// `environment`: where credentials, region and endpoint come from (`S3Configuration`);
    /// `network`: where a confined item's upload may connect (nil: anywhere). Redirects are
    /// not followed: S3 answers one only for a bucket in another region, an error here.
    package init(location: S3Location, environment: [String: String] = ProcessInfo.processInfo.environment,
         partSize: Int = S3Upload.defaultPartSize, network: NetworkRules? = nil) throws(S3Error) {
        requests = S3Requests(configuration: try S3Configuration(environment: environment), location: location)
        self.partSize = max(partSize, 5 << 20)
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow, timeout: .init(connect: .seconds(10), read: .seconds(120)))
        configuration.connectionPool.retryConnectionEstablishment = false
        if let network {
            let url = requests.signed(method: "PUT", query: [], headers: [], payload: .empty).url
            do {
                configuration = try network.pinned(configuration, for: url)
            } catch {
                throw S3Error(message: "cannot write \(location): \(error.message)")
            }
        }
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    deinit {
        if !closed { abort() }
    }

    /// Adds `bytes`; a full part goes up now (the first one starts the multipart upload).
    package func write(_ bytes: Data) throws(S3Error) {
        buffer.append(bytes)
        while buffer.count >= partSize {
            try uploadPart(buffer.prefix(partSize))
            buffer.removeFirst(partSize)
        }
    }

    /// Puts the object in place: one PUT, or the last part and the multipart upload's completion.
    package func finish() throws(S3Error) {
        do throws(S3Error) {
            if uploadID == nil {
                _ = try send("PUT", body: buffer, expecting: "write")
            } else {
                if !buffer.isEmpty || parts.isEmpty { try uploadPart(buffer) }
                let list = parts.enumerated().map { "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\(Self.escaped($0.element))</ETag></Part>" }
                let body = Data(("<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">" + list.joined()
                    + "</CompleteMultipartUpload>").utf8)
                let answer = try send("POST", query: [("uploadId", uploadID!)], headers: [("Content-Type", "application/xml")],
                                      body: body, expecting: "complete the multipart upload of")
                // S3 may answer 200 and tell of a failure in the body.
                if S3Requests.element("Code", in: answer) != nil {
                    throw S3Error(message: "cannot complete the upload: " + requests.failure(status: 200, body: answer))
                }
            }
            buffer = Data()
            closed = true
            try? client.syncShutdown()
        } catch {
            abort()
            throw error
        }
    }

    /// Drops what was written: the multipart upload is aborted, so no object and no parts stay.
    func abort() {
        guard !closed else { return }
        closed = true
        buffer = Data()
        if let uploadID {
            _ = try? send("DELETE", query: [("uploadId", uploadID)], body: Data(), expecting: "abort the multipart upload of")
        }
        try? client.syncShutdown()
    }

    private func uploadPart(_ bytes: Data) throws(S3Error) {
        if uploadID == nil {
            let answer = try send("POST", query: [("uploads", "")], body: Data(), expecting: "start a multipart upload of")
            guard let id = S3Requests.element("UploadId", in: answer) else {
                throw S3Error(message: "cannot start a multipart upload of \(requests.location): the answer had no UploadId")
            }
            uploadID = id
        }
        let number = parts.count + 1
        let headers = try sendForHeaders("PUT", query: [("partNumber", String(number)), ("uploadId", uploadID!)], body: Data(bytes),
                                         expecting: "upload part \(number) of")
        guard let etag = headers.first(name: "etag") else {
            throw S3Error(message: "part \(number) of \(requests.location) was uploaded but S3 sent no ETag for it")
        }
        parts.append(etag)
    }

    @discardableResult
    private func send(_ method: String, query: [(name: String, value: String)] = [], headers: [(name: String, value: String)] = [],
                      body: Data, expecting what: String) throws(S3Error) -> String {
        try exchange(method, query: query, headers: headers, body: body, expecting: what).body
    }

    private func sendForHeaders(_ method: String, query: [(name: String, value: String)], body: Data,
                                expecting what: String) throws(S3Error) -> HTTPHeaders {
        try exchange(method, query: query, headers: [], body: body, expecting: what).headers
    }

    /// One signed request, waited for; a status other than 2xx is an error naming the object.
    private func exchange(_ method: String, query: [(name: String, value: String)], headers: [(name: String, value: String)],
                          body: Data, expecting what: String) throws(S3Error) -> (headers: HTTPHeaders, body: String) {
        let signed = requests.signed(method: method, query: query, headers: headers,
                                     payload: body.isEmpty ? .empty : .hash(SigV4Signer.hash(body)))
        var request = HTTPClientRequest(url: signed.url)
        request.method = HTTPMethod(rawValue: method)
        for header in signed.headers { request.headers.add(name: header.name, value: header.value) }
        // PUT and POST say their length, 0 included; the client writes Content-Length from it.
        if method == "PUT" || method == "POST" { request.body = .bytes(ByteBuffer(data: body)) }
        let client = self.client
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                let response = try await client.execute(request, timeout: .seconds(300))
                let bytes = try await response.body.collect(upTo: 1 << 20)
                outcome.result.withLock { $0 = .success((Int(response.status.code), response.headers, String(buffer: bytes))) }
            } catch {
                outcome.result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        switch outcome.result.withLock({ $0 }) {
        case .success(let (status, headers, text)) where (200..<300).contains(status):
            return (headers, text)
        case .success(let (status, _, text)):
            throw S3Error(message: "cannot \(what) \(requests.location): " + requests.failure(status: status, body: text))
        case .failure(let error):
            let lowered = "\(error)".lowercased()
            let reason = lowered.contains("refused") ? "connection refused: nothing listens at \(requests.endpointName)" : "\(error)"
            throw S3Error(message: "cannot \(what) \(requests.location): \(reason)")
        case nil:
            throw S3Error(message: "cannot \(what) \(requests.location): no answer")
        }
    }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// What the request's task hands back to the waiting thread.
    private final class Outcome: Sendable {
        let result = Mutex<Result<(Int, HTTPHeaders, String), any Error>?>(nil)
    }
}

extension S3Upload: OutputSink {
    package func abandon() { abort() }
}
#endif
