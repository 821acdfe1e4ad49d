/// The job that last wrote each key of one entity, as sorted, non-overlapping ranges of
/// integer keys (neighbouring ranges of the same job merged), and a map for other keys.
/// A job that writes a whole table in key order leaves one range.
struct KeyOwners {
    private struct Run {
        var lower: Int64
        var upper: Int64
        var job: String
    }

    private var runs: [Run] = []
    private var others: [[StoreValue]: String] = [:]

    var rangeCount: Int { runs.count + others.count }

    mutating func assign(_ keys: KeySet, to job: String) {
        for range in keys.ranges { assign(range.lowerBound, range.upperBound, to: job) }
        for key in keys.others { others[key] = job }
    }

    func owner(of id: ObjectID) -> String? {
        guard case .integer(let key)? = id.singleKey else { return others[id.key] }
        let index = firstRun(endingAtOrAfter: key)
        guard index < runs.count, runs[index].lower <= key else { return nil }
        return runs[index].job
    }

    /// Gives `lower...upper` to `job`, cutting it out of the runs it overlaps and merging it
    /// with neighbouring runs of the same job.
    private mutating func assign(_ lower: Int64, _ upper: Int64, to job: String) {
        let first = firstRun(endingAtOrAfter: lower)
        var last = first
        while last < runs.count, runs[last].lower <= upper { last += 1 }   // runs[first..<last] overlap
        var pieces: [Run] = []
        if first > 0 { pieces.append(runs[first - 1]) }   // the neighbours, to merge with
        for run in runs[first..<last] where run.lower < lower {
            pieces.append(Run(lower: run.lower, upper: lower - 1, job: run.job))
        }
        pieces.append(Run(lower: lower, upper: upper, job: job))
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

    /// The position of the first run whose upper bound is at least `key` (binary search).
    private func firstRun(endingAtOrAfter key: Int64) -> Int {
        var low = 0, high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle].upper < key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
