import CBatchRunZstd

/// Decompresses a zstd stream (one frame or several) from another source, chunk by chunk:
/// memory is the two buffers and the frame's window. A stream that ends inside a frame is
/// truncated; bytes that are not zstd are corrupt: both are errors.
final class ZstdByteSource: ByteSource {
    private let input: any ByteSource
    private let context: OpaquePointer
    private let inputBuffer: UnsafeMutableRawBufferPointer
    private var inputStart = 0, inputEnd = 0
    private var inputEnded = false
    /// Inside a frame: the stream may not end here.
    private var inFrame = false
    private var finished = false
    private var delivered: Int64 = 0
    private var consumed: Int64 = 0

    package init(_ input: any ByteSource) throws(ByteSourceError) {
        self.input = input
        guard let context = ZSTD_createDCtx() else { throw ByteSourceError(message: "cannot start zstd decompression (out of memory)") }
        self.context = context
        inputBuffer = .allocate(byteCount: ZSTD_DStreamInSize(), alignment: 1)
    }

    deinit {
        ZSTD_freeDCtx(context)
        inputBuffer.deallocate()
    }

    package func read(into buffer: UnsafeMutableRawBufferPointer) throws(ByteSourceError) -> Int {
        guard !finished, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            if inputStart == inputEnd && !inputEnded {
                let count = try input.read(into: inputBuffer)
                inputStart = 0
                inputEnd = count
                if count == 0 { inputEnded = true }
            }
            // Called even with no input left: zstd may still hold output that did not fit.
            var input = ZSTD_inBuffer(src: inputBuffer.baseAddress!, size: inputEnd, pos: inputStart)
            var output = ZSTD_outBuffer(dst: base, size: buffer.count, pos: 0)
            let status = ZSTD_decompressStream(context, &output, &input)
            if ZSTD_isError(status) != 0 {
                throw ByteSourceError(message: "the zstd stream is corrupt after \(delivered) bytes decompressed: "
                    + String(cString: ZSTD_getErrorName(status)))
            }
            // A call that moved nothing says nothing of the frame (after a frame's end it asks
            // for the next one's header).
            if input.pos > inputStart || output.pos > 0 { inFrame = status != 0 }
            consumed += Int64(input.pos - inputStart)
            inputStart = input.pos
            delivered += Int64(output.pos)
            if output.pos > 0 { return output.pos }
            if inputStart == inputEnd && inputEnded {
                if consumed == 0 { throw ByteSourceError(message: "the zstd stream is empty (not a zstd file)") }
                if inFrame {
                    throw ByteSourceError(message: "the zstd stream is truncated: it ends after \(delivered) bytes decompressed, inside a frame")
                }
                finished = true
                return 0
            }
        }
    }

    package func skip(to offset: Int64) throws(ByteSourceError) {
        try discard(from: delivered, to: offset)
    }
}
