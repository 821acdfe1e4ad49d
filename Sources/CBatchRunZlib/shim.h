// The system's zlib (Debian: zlib1g-dev), for gzip feeds and outputs.
#include <zlib.h>

// zlib's init functions are macros (they pass the library's version and struct size), which
// Swift does not import: these inline wrappers call them.
static inline int batchrun_inflateInit2(z_stream *stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

static inline int batchrun_deflateInit2(z_stream *stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
