#if canImport(Glibc)
import Glibc
#endif

/// glibc's malloc thresholds for batch work. By default an arena whose free top passes twice
/// the last large block freed hands that memory back to the system, and the next batch's
/// arrays fault it in again a page at a time (a 200,000-row re-import: 11,000 page faults,
/// about 50 ms of its 0.8 s of CPU). Fixed thresholds keep up to 64 MB free for the next batch
/// and take blocks under 32 MB from the arenas. The peaks of `bench/memory.sh` did not move; a
/// run holding many conflicts for its report keeps up to that much more resident (the
/// re-import: 135 -> 150-157 MB). Set once, first thing in `main`.
enum MallocSettings {
    static func apply() {
        #if canImport(Glibc)
        // `mallopt` and its parameters come from malloc.h, which Swift's Glibc module leaves out:
        // the function is looked up by name (RTLD_DEFAULT is the null handle) and the
        // parameters are malloc.h's values.
        let trimThreshold: Int32 = -1, mmapThreshold: Int32 = -3
        guard let symbol = dlsym(nil, "mallopt") else { return }
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        _ = mallopt(mmapThreshold, 32 << 20)
        _ = mallopt(trimThreshold, 64 << 20)
        #endif
    }
}
