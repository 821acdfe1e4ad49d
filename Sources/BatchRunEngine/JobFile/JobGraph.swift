/// The jobs' dependency graph from `needs`: cycles, ancestors and waves.
///
/// ```swift
/// let graph = JobGraph(jobs: file.jobs)
/// graph.waves()   // [["import_sessions"], ["close_stale", "purge_old"], ["stats"], ["report"]]
/// ```
package struct JobGraph: Sendable {
    /// Job names in file order.
    package let names: [String]
    /// Job name to the jobs it needs (unknown names dropped).
    package let needs: [String: [String]]

    package init(jobs: [Job]) {
        self.init(jobs.map { ($0.name, $0.needs) })
    }

    /// The graph of jobs given as names with their needs (a report's jobs, say), in order.
    package init(_ jobs: [(name: String, needs: [String])]) {
        names = jobs.map(\.name)
        let known = Set(names)
        needs = Dictionary(jobs.map { ($0.name, $0.needs.filter(known.contains)) }, uniquingKeysWith: { first, _ in first })
    }

    /// A cycle as `[a, c, b, a]`, or nil. Follows `needs` edges from the first job in file order.
    package func cycle() -> [String]? {
        var state: [String: Int] = [:]   // 1 visiting, 2 done
        var stack: [String] = []
        func visit(_ name: String) -> [String]? {
            state[name] = 1
            stack.append(name)
            for next in needs[name] ?? [] {
                if state[next] == 1 {
                    let start = stack.firstIndex(of: next)!
                    return Array(stack[start...]) + [next]
                }
                if state[next] == nil, let found = visit(next) { return found }
            }
            stack.removeLast()
            state[name] = 2
            return nil
        }
        for name in names where state[name] == nil {
            if let found = visit(name) { return found }
        }
        return nil
    }

    /// Every job `name` needs, directly or through others.
    package func ancestors(of name: String) -> Set<String> {
        var result: Set<String> = []
        var queue = needs[name] ?? []
        while let next = queue.popLast() {
            if result.insert(next).inserted { queue.append(contentsOf: needs[next] ?? []) }
        }
        return result
    }

    /// Every job that needs `name`, directly or through others.
    package func descendants(of name: String) -> Set<String> {
        var result: Set<String> = []
        var queue = [name]
        while let next = queue.popLast() {
            for candidate in names where needs[candidate]?.contains(next) == true {
                if result.insert(candidate).inserted { queue.append(candidate) }
            }
        }
        return result
    }

    /// Jobs grouped by depth: a wave's jobs can run together once earlier waves are done.
    /// Within a wave, file order. A need that closes a cycle (only a hand-edited report can
    /// have one) is ignored.
    package func waves() -> [[String]] {
        var depth: [String: Int] = [:]
        var visiting: Set<String> = []
        func depthOf(_ name: String) -> Int {
            if let known = depth[name] { return known }
            guard visiting.insert(name).inserted else { return -1 }
            let value = (needs[name] ?? []).map { depthOf($0) + 1 }.max() ?? 0
            visiting.remove(name)
            depth[name] = value
            return value
        }
        var waves: [[String]] = []
        for name in names {
            let level = depthOf(name)
            while waves.count <= level { waves.append([]) }
            waves[level].append(name)
        }
        return waves
    }
}
