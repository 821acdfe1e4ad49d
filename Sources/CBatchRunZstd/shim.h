// The system's libzstd (Debian: libzstd-dev), for zstd feeds and outputs.
#include <zstd.h>
