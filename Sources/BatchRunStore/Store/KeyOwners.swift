/// The job that last wrote each key of one entity, kept so that memory follows how the keys
/// lie, not how many there are. Integer keys go in chunks of 64 consecutive keys (`key >> 6`):
///
/// - chunks written whole by one job are sorted, non-overlapping ranges of chunks (`runs`;
///   neighbouring ranges of the same job merged): a job that writes a whole table in key order
///   leaves one range;
/// - a chunk written in part, or by several jobs, is a bit mask per job (`partial`): a job that
///   writes scattered keys (half the rows of a table, by a `where` on a value) keeps 8 bytes
///   and a job number for each 64 keys, not a range for each key.
///
/// Other keys (text, composite) are a map.
///
/// ```swift
/// var owners = KeyOwners()
/// owners.assign(keys, to: "touch")
/// owners.owner(of: ObjectID(entity: "Account", single: .integer(41)))   // "touch"
/// ```
package struct KeyOwners {
    private struct Run {
        var lower: Int64
        var upper: Int64
        var job: String
    }

    /// The keys of one chunk a job owns: bit `key & 63` of `mask`.
    private struct Share {
        var job: UInt32
        var mask: UInt64
    }

    /// One chunk's owners, almost always one job.
    private enum Chunk {
        case one(Share)
        case many([Share])

        var shares: [Share] {
            switch self {
            case .one(let share): return [share]
            case .many(let shares): return shares
            }
        }
    }

    /// Ranges of whole chunks, by chunk index.
    private var runs: [Run] = []
    /// Chunks owned in part or by several jobs, by chunk index; never also in `runs`.
    private var partial: [Int64: Chunk] = [:]
    /// The jobs `partial` names, by number.
    private var jobs: [String] = []
    private var jobNumbers: [String: UInt32] = [:]
    private var others: [[StoreValue]: String] = [:]

    /// How many pieces are kept: ranges, partly owned chunks and other keys (for tests of the bound).
    package var rangeCount: Int { runs.count + partial.count + others.count }

    package mutating func assign(_ keys: KeySet, to job: String) {
        for range in keys.ranges { assign(range.lowerBound, range.upperBound, to: job) }
        for key in keys.others { others[key] = job }
    }

    package func owner(of id: ObjectID) -> String? {
        guard case .integer(let key)? = id.singleKey else { return others[id.key] }
        let chunk = key >> 6
        if let owners = partial[chunk] {
            let bit = UInt64(1) << UInt64(key & 63)
            switch owners {
            case .one(let share): return share.mask & bit != 0 ? jobs[Int(share.job)] : nil
            case .many(let shares): return shares.first { $0.mask & bit != 0 }.map { jobs[Int($0.job)] }
            }
        }
        let index = firstRun(endingAtOrAfter: chunk)
        guard index < runs.count, runs[index].lower <= chunk else { return nil }
        return runs[index].job
    }

    /// Gives the keys `lower...upper` to `job`: whole chunks as ranges, the chunks at either end
    /// (when cut) as masks.
    private mutating func assign(_ lower: Int64, _ upper: Int64, to job: String) {
        let first = lower >> 6, last = upper >> 6
        if first == last {
            return assign(mask: Self.mask(Int(lower & 63), Int(upper & 63)), ofChunk: first, to: job)
        }
        var firstWhole = first, lastWhole = last
        if lower & 63 != 0 {
            assign(mask: Self.mask(Int(lower & 63), 63), ofChunk: first, to: job)
            firstWhole += 1
        }
        if upper & 63 != 63 {
            assign(mask: Self.mask(0, Int(upper & 63)), ofChunk: last, to: job)
            lastWhole -= 1
        }
        if firstWhole <= lastWhole { assignWhole(firstWhole, lastWhole, to: job) }
    }

    /// Bits `low...high` set.
    private static func mask(_ low: Int, _ high: Int) -> UInt64 {
        let upTo = high == 63 ? UInt64.max : (UInt64(1) << UInt64(high + 1)) - 1
        return upTo & ~((UInt64(1) << UInt64(low)) - 1)
    }

    /// Gives the keys of chunk `chunk` in `mask` to `job`, taking them from their owners.
    private mutating func assign(mask: UInt64, ofChunk chunk: Int64, to job: String) {
        if mask == .max { return assignWhole(chunk, chunk, to: job) }
        let code = number(of: job)
        var shares: [Share]
        if let owners = partial[chunk] {
            if case .one(var share) = owners, share.job == code {
                // The usual case: more keys of a chunk for the job that has some of it.
                share.mask |= mask
                if share.mask == .max {
                    partial[chunk] = nil
                    replace(chunk, chunk, with: job)
                } else {
                    partial[chunk] = .one(share)
                }
                return
            }
            shares = owners.shares
        } else {
            let index = firstRun(endingAtOrAfter: chunk)
            if index < runs.count, runs[index].lower <= chunk {
                if runs[index].job == job { return }   // the job has the whole chunk already
                // A chunk of a range: out of the range, into the masks.
                let whole = Share(job: number(of: runs[index].job), mask: .max)
                replace(chunk, chunk, with: nil)
                shares = [whole]
            } else {
                partial[chunk] = .one(Share(job: code, mask: mask))
                return
            }
        }
        for index in shares.indices { shares[index].mask &= ~mask }
        if let index = shares.firstIndex(where: { $0.job == code }) {
            shares[index].mask |= mask
        } else {
            shares.append(Share(job: code, mask: mask))
        }
        shares.removeAll { $0.mask == 0 }
        if shares.count == 1 && shares[0].mask == .max {
            partial[chunk] = nil
            replace(chunk, chunk, with: jobs[Int(shares[0].job)])
        } else {
            partial[chunk] = shares.count == 1 ? .one(shares[0]) : .many(shares)
        }
    }

    /// Gives chunks `lower...upper` whole to `job`.
    private mutating func assignWhole(_ lower: Int64, _ upper: Int64, to job: String) {
        if !partial.isEmpty {
            if upper - lower < Int64(partial.count) {
                for chunk in lower...upper { partial[chunk] = nil }
            } else {
                partial = partial.filter { $0.key < lower || $0.key > upper }
            }
        }
        replace(lower, upper, with: job)
    }

    private mutating func number(of job: String) -> UInt32 {
        if let number = jobNumbers[job] { return number }
        let number = UInt32(jobs.count)
        jobs.append(job)
        jobNumbers[job] = number
        return number
    }

    /// Gives chunks `lower...upper` to `job` (nil: to no one), cutting them out of the runs they
    /// overlap and merging them with neighbouring runs of the same job.
    private mutating func replace(_ lower: Int64, _ upper: Int64, with job: String?) {
        let first = firstRun(endingAtOrAfter: lower)
        var last = first
        while last < runs.count, runs[last].lower <= upper { last += 1 }   // runs[first..<last] overlap
        var pieces: [Run] = []
        if first > 0 { pieces.append(runs[first - 1]) }   // the neighbours, to merge with
        for run in runs[first..<last] where run.lower < lower {
            pieces.append(Run(lower: run.lower, upper: lower - 1, job: run.job))
        }
        if let job { pieces.append(Run(lower: lower, upper: upper, job: job)) }
        for run in runs[first..<last] where run.upper > upper {
            pieces.append(Run(lower: upper + 1, upper: run.upper, job: run.job))
        }
        if last < runs.count { pieces.append(runs[last]) }
        var merged: [Run] = []
        for piece in pieces {
            if let previous = merged.last, previous.job == piece.job, previous.upper &+ 1 == piece.lower {
                merged[merged.count - 1].upper = piece.upper
            } else {
                merged.append(piece)
            }
        }
        runs.replaceSubrange((first > 0 ? first - 1 : first)..<(last < runs.count ? last + 1 : last), with: merged)
    }

    /// The position of the first run whose upper bound is at least `chunk` (binary search).
    private func firstRun(endingAtOrAfter chunk: Int64) -> Int {
        var low = 0, high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle].upper < chunk { low = middle + 1 } else { high = middle }
        }
        return low
    }

    package init() {
    }
}
