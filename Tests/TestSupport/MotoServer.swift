import Foundation

/// A throwaway S3-compatible endpoint: moto's server on 127.0.0.1, started at first use by
/// `Tests/TestSupport/moto-throwaway.sh` (which makes the virtual environment with
/// `pip install 'moto[server]'` once), with AWS authentication on and two test users: one allowed
/// everything, one denied everything. Its watchdog stops it once this test process is gone, also
/// when it was killed. Tests share one server and each takes a bucket of its own (`bucket()`).
///
/// ```swift
/// let moto = try MotoServer.shared
/// let bucket = try moto.bucket()
/// try moto.put(bucket: bucket, key: "feeds/a.csv", file: path)
/// let result = try Batchrun.run(["run", "job.yaml"], in: folder.url, environment: moto.environment)
/// ```
public struct MotoServer: Sendable {
    /// The server's folder (its log, `credentials.json`, `endpoint`).
    public let folder: String
    /// `http://127.0.0.1:PORT`.
    public let endpoint: String
    /// A user allowed every action.
    public let accessKeyID: String
    public let secretAccessKey: String
    /// A user denied every action (`AccessDenied`).
    public let deniedAccessKeyID: String
    public let deniedSecretAccessKey: String

    private static let started: Result<MotoServer, any Error> = Result { try start() }

    /// The server this test process shares, started at first use.
    public static var shared: MotoServer {
        get throws { try started.get() }
    }

    /// A server of the test's own (`stop()` it; the watchdog does when the process ends).
    public static func start() throws -> MotoServer {
        let lines = try PostgresServer.run("/bin/bash", [script, "start", "--owner", String(getpid())])
            .split(separator: "\n").map(String.init)
        guard lines.count >= 2, let endpoint = lines.last, endpoint.hasPrefix("http://") else {
            throw PostgresServer.ServerError.failed("moto-throwaway.sh printed no folder and endpoint: \(lines)")
        }
        let folder = lines[lines.count - 2]
        struct Key: Decodable { var access_key_id: String; var secret_access_key: String }
        let keys = try JSONDecoder().decode([String: Key].self, from: Data(contentsOf: URL(fileURLWithPath: folder + "/credentials.json")))
        guard let allowed = keys["allowed"], let denied = keys["denied"] else {
            throw PostgresServer.ServerError.failed("moto-throwaway.sh made no test users in \(folder)")
        }
        return MotoServer(folder: folder, endpoint: endpoint, accessKeyID: allowed.access_key_id,
                          secretAccessKey: allowed.secret_access_key, deniedAccessKeyID: denied.access_key_id,
                          deniedSecretAccessKey: denied.secret_access_key)
    }

    /// Stops the server and removes its folder.
    public func stop() throws {
        _ = try PostgresServer.run("/bin/bash", [Self.script, "stop", folder])
    }

    /// What a batchrun process needs to reach this server as the allowed user (and nothing of
    /// the machine's own AWS configuration).
    public var environment: [String: String] {
        [
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": accessKeyID,
            "AWS_SECRET_ACCESS_KEY": secretAccessKey,
            "AWS_REGION": "us-east-1",
            "AWS_PROFILE": "",
            "AWS_SESSION_TOKEN": "",
            "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/batchrun-test/credentials",
            "AWS_CONFIG_FILE": "/nonexistent/batchrun-test/config",
        ]
    }

    /// A new, empty bucket; its name.
    public func bucket(_ prefix: String = "t") throws -> String {
        let name = "\(prefix)-\(UInt32.random(in: .min ... .max))"
        try s3(["mb", name])
        return name
    }

    /// Uploads the local `file` as `bucket/key` (boto3's PUT, not batchrun's).
    public func put(bucket: String, key: String, file: String) throws {
        try s3(["put", bucket, key, file])
    }

    /// Downloads `bucket/key` to the local `file`.
    public func get(bucket: String, key: String, file: String) throws {
        try s3(["get", bucket, key, file])
    }

    /// The keys in `bucket`.
    public func keys(in bucket: String) throws -> [String] {
        try s3(["ls", bucket]).split(separator: "\n").map(String.init)
    }

    /// How many multipart uploads of `bucket` were started and neither completed nor aborted.
    public func pendingUploads(in bucket: String) throws -> Int {
        Int(try s3(["uploads", bucket])) ?? -1
    }

    /// Runs `moto-s3.py FOLDER ARGUMENTS` (boto3 as the allowed user); its output.
    @discardableResult
    public func s3(_ arguments: [String]) throws -> String {
        try PostgresServer.run(Self.python, [Self.tool, folder] + arguments)
    }

    /// The virtual environment's python (moto, boto3), made if missing.
    public static let python: String =
        (try? PostgresServer.run("/bin/bash", [script, "python"]).split(separator: "\n").last.map(String.init)) ?? "python3"

    private static let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    private static let script = here.appendingPathComponent("moto-throwaway.sh").path
    private static let tool = here.appendingPathComponent("moto-s3.py").path
}
