import Foundation

/// The parts of a JSON report the queue tests check: its status, run and store, and each job's rows written.
struct RunReportJSON {
    let status: String
    let runID: Int?
    let store: String
    let jobs: [String: Int]

    init(path: String) throws {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any] ?? [:]
        status = object["status"] as? String ?? ""
        runID = object["run_id"] as? Int
        store = object["store"] as? String ?? ""
        var jobs: [String: Int] = [:]
        for job in object["jobs"] as? [[String: Any]] ?? [] {
            let rows = job["rows"] as? [String: Int] ?? [:]
            jobs[job["name"] as? String ?? ""] = (rows["inserted"] ?? 0) + (rows["updated"] ?? 0)
        }
        self.jobs = jobs
    }
}
