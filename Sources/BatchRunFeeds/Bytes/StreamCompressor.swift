import CBatchRunZlib
import CBatchRunZstd
import Foundation

/// Compresses an output as it is written (gzip through zlib, zstd through libzstd), chunk by
/// chunk: `compress` takes the next bytes and gives what is ready; `finish` the rest.
package final class StreamCompressor {
    private enum Engine {
        case gzip(UnsafeMutablePointer<z_stream>)
        case zstd(OpaquePointer)
    }

    private let engine: Engine
    private let output: UnsafeMutableRawBufferPointer

    /// Nil for `.none`.
    package init?(_ compression: FeedCompression) throws {
        switch compression {
        case .none:
            return nil
        case .gzip:
            let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
            stream.initialize(to: z_stream())
            guard batchrun_deflateInit2(stream, 6, 16 + MAX_WBITS) == Z_OK else {
                stream.deallocate()
                throw ByteSourceError(message: "cannot start gzip compression (out of memory)")
            }
            engine = .gzip(stream)
        case .zstd:
            guard let context = ZSTD_createCCtx() else { throw ByteSourceError(message: "cannot start zstd compression (out of memory)") }
            ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, 3)
            ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1)
            engine = .zstd(context)
        }
        output = .allocate(byteCount: 1 << 17, alignment: 1)
    }

    deinit {
        switch engine {
        case .gzip(let stream):
            deflateEnd(stream)
            stream.deallocate()
        case .zstd(let context):
            ZSTD_freeCCtx(context)
        }
        output.deallocate()
    }

    /// The compressed bytes ready after `bytes`.
    package func compress(_ bytes: Data) throws -> Data {
        try run(bytes, finishing: false)
    }

    /// The compressed stream's last bytes.
    package func finish() throws -> Data {
        try run(Data(), finishing: true)
    }

    private func run(_ bytes: Data, finishing: Bool) throws -> Data {
        var result = Data()
        try bytes.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            switch engine {
            case .gzip(let stream):
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
                stream.pointee.avail_in = uInt(input.count)
                while true {
                    stream.pointee.next_out = output.baseAddress!.assumingMemoryBound(to: Bytef.self)
                    stream.pointee.avail_out = uInt(output.count)
                    let status = deflate(stream, finishing ? Z_FINISH : Z_NO_FLUSH)
                    guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                        throw ByteSourceError(message: "gzip compression failed (zlib error \(status))")
                    }
                    result.append(output.baseAddress!.assumingMemoryBound(to: UInt8.self), count: output.count - Int(stream.pointee.avail_out))
                    if finishing ? status == Z_STREAM_END : stream.pointee.avail_in == 0 && stream.pointee.avail_out > 0 { break }
                }
            case .zstd(let context):
                var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
                while true {
                    var outBuffer = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
                    let remaining = ZSTD_compressStream2(context, &outBuffer, &inBuffer, finishing ? ZSTD_e_end : ZSTD_e_continue)
                    if ZSTD_isError(remaining) != 0 {
                        throw ByteSourceError(message: "zstd compression failed: \(String(cString: ZSTD_getErrorName(remaining)))")
                    }
                    result.append(output.baseAddress!.assumingMemoryBound(to: UInt8.self), count: outBuffer.pos)
                    if finishing ? remaining == 0 : inBuffer.pos == inBuffer.size { break }
                }
            }
        }
        return result
    }
}
