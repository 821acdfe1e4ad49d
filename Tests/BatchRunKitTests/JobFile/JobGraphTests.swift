import Testing
@testable import BatchRunKit

@Suite("Job graph")
struct JobGraphTests {
    func job(_ name: String, needs: [String] = []) -> Job {
        Job(name: name, needs: needs, steps: [], mergePolicy: .error, batchSize: 1, atomic: false, timeout: nil, retries: 0,
            hooks: Hooks(), description: nil, location: SourceLocation(file: "f", line: 1, column: 1))
    }

    @Test("waves group jobs by depth, in file order within a wave")
    func waves() {
        let graph = JobGraph(jobs: [job("report", needs: ["stats"]), job("import"), job("close", needs: ["import"]),
                                    job("purge", needs: ["import"]), job("stats", needs: ["close", "purge"]), job("lonely")])
        #expect(graph.waves() == [["import", "lonely"], ["close", "purge"], ["stats"], ["report"]])
        #expect(graph.ancestors(of: "report") == ["stats", "close", "purge", "import"])
        #expect(graph.descendants(of: "close") == ["stats", "report"])
        #expect(graph.cycle() == nil)
    }

    @Test("a cycle is found and printed from its first job")
    func cycle() {
        let graph = JobGraph(jobs: [job("a", needs: ["c"]), job("b", needs: ["a"]), job("c", needs: ["b"]), job("d")])
        #expect(graph.cycle() == ["a", "c", "b", "a"])
        #expect(JobGraph(jobs: [job("x", needs: ["x"])]).cycle() == ["x", "x"])
    }
}
