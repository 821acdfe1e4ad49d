import CBatchRunZlib

/// Decompresses a gzip stream (several members one after another too, as `gzip` writes them
/// when files are concatenated) from another source, chunk by chunk: memory is the two buffers
/// and zlib's 32 KB window, whatever the feed's size. A stream that ends before its last
/// member's end is truncated; bytes that are not gzip are corrupt: both are errors.
final class GzipByteSource: ByteSource {
    private let input: any ByteSource
    /// zlib keeps the stream's address in its state: it lives at one place, allocated here.
    private let stream: UnsafeMutablePointer<z_stream>
    private let inputBuffer: UnsafeMutableRawBufferPointer
    private var inputEnded = false
    private var sawInput = false
    /// A member ended: the next bytes, if any, start another one.
    private var memberEnded = false
    private var finished = false
    private var delivered: Int64 = 0

    package init(_ input: any ByteSource, bufferSize: Int = 1 << 17) throws(ByteSourceError) {
        self.input = input
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        inputBuffer = .allocate(byteCount: bufferSize, alignment: 1)
        // 16 + 15: a gzip header and trailer around a deflate stream with the largest window.
        guard batchrun_inflateInit2(stream, 16 + MAX_WBITS) == Z_OK else {
            stream.deallocate()
            inputBuffer.deallocate()
            throw ByteSourceError(message: "cannot start gzip decompression (out of memory)")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        inputBuffer.deallocate()
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(ByteSourceError) -> Int {
        guard !finished, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            if stream.pointee.avail_in == 0 && !inputEnded {
                let count = try input.read(into: inputBuffer)
                if count == 0 {
                    inputEnded = true
                } else {
                    sawInput = true
                    stream.pointee.next_in = inputBuffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.pointee.avail_in = uInt(count)
                }
            }
            if memberEnded {
                if stream.pointee.avail_in == 0 && inputEnded {
                    finished = true
                    return 0
                }
                guard stream.pointee.avail_in > 0 else { continue }
                inflateReset(stream)
                memberEnded = false
            }
            // Called even with no input left: zlib may still hold output that did not fit.
            stream.pointee.next_out = base.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(buffer.count)
            let status = inflate(stream, Z_NO_FLUSH)
            let produced = buffer.count - Int(stream.pointee.avail_out)
            delivered += Int64(produced)
            switch status {
            case Z_STREAM_END:
                memberEnded = true
            case Z_OK, Z_BUF_ERROR:
                if produced == 0 && stream.pointee.avail_in == 0 && inputEnded {
                    throw ByteSourceError(message: !sawInput
                        ? "the gzip stream is empty (not a gzip file)"
                        : "the gzip stream is truncated: it ends after \(delivered) bytes decompressed, before the end of its data")
                }
            default:
                let detail = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                throw ByteSourceError(message: "the gzip stream is corrupt after \(delivered) bytes decompressed: \(detail)")
            }
            if produced > 0 { return produced }
        }
    }

    package func skip(to offset: Int64) throws(ByteSourceError) {
        try discard(from: delivered, to: offset)
    }
}
