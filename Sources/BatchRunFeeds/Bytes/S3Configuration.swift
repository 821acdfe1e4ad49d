#if NetworkFeeds
import Foundation

/// Where and as whom S3 requests go, found as the AWS tools find it (section 14):
/// - credentials: `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`), else
///   the profile (`AWS_PROFILE`, `AWS_DEFAULT_PROFILE` or `default`) of the shared credentials
///   file (`AWS_SHARED_CREDENTIALS_FILE`, `~/.aws/credentials`), then of the config file
///   (`AWS_CONFIG_FILE`, `~/.aws/config`, section `[profile NAME]` or `[default]`);
/// - region: `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`, else `us-east-1`;
/// - endpoint: `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's `endpoint_url`
///   (addressed path-style: `ENDPOINT/BUCKET/KEY`), else AWS's virtual-hosted
///   `https://BUCKET.s3.REGION.amazonaws.com/KEY`.
///
/// ```swift
/// let s3 = try S3Configuration(environment: ProcessInfo.processInfo.environment)
/// let address = s3.address(of: S3Location(url: "s3://feeds/2026/flights.csv.gz")!)
/// ```
package struct S3Configuration: Sendable {
    package var credentials: AWSCredentials
    package var region: String
    /// Another endpoint than AWS's (MinIO, Ceph, R2, moto): scheme, `host:port` and the path
    /// the buckets are under (usually none).
    package var endpoint: S3Address?
    /// Where the credentials came from, for messages: `environment`, `profile "x" of ~/.aws/credentials`.
    var credentialSource: String

    /// The resolution above; `home` is the folder `~` stands for.
    package init(environment: [String: String], home: String = NSHomeDirectory()) throws(S3Error) {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        let explicitProfile = value("AWS_PROFILE") ?? value("AWS_DEFAULT_PROFILE")
        let profile = explicitProfile ?? "default"
        let credentialsPath = value("AWS_SHARED_CREDENTIALS_FILE").map { Self.expand($0, home: home) } ?? home + "/.aws/credentials"
        let configPath = value("AWS_CONFIG_FILE").map { Self.expand($0, home: home) } ?? home + "/.aws/config"
        let credentialsFile = Self.sections(ofFile: credentialsPath)
        let configFile = Self.sections(ofFile: configPath)
        let fromCredentials = credentialsFile?[profile]
        let fromConfig = configFile?[profile == "default" ? "default" : "profile \(profile)"]
        if explicitProfile != nil, fromCredentials == nil, fromConfig == nil {
            throw S3Error(message: "AWS profile \"\(profile)\" is in neither \(credentialsPath) nor \(configPath)")
        }

        if let id = value("AWS_ACCESS_KEY_ID") {
            guard let secret = value("AWS_SECRET_ACCESS_KEY") else {
                throw S3Error(message: "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not: set both, or neither to use a profile")
            }
            credentials = AWSCredentials(accessKeyID: id, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN"))
            credentialSource = "the environment (AWS_ACCESS_KEY_ID)"
        } else if let found = Self.credentials(in: fromCredentials) {
            credentials = found
            credentialSource = "profile \"\(profile)\" of \(credentialsPath)"
        } else if let found = Self.credentials(in: fromConfig) {
            credentials = found
            credentialSource = "profile \"\(profile)\" of \(configPath)"
        } else {
            throw S3Error(message: "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE with a profile in \(credentialsPath)")
        }

        region = value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? fromConfig?["region"] ?? "us-east-1"

        let ignoresEndpoints = value("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS")?.lowercased() == "true"
        var endpointSetting: (name: String, url: String)?
        if !ignoresEndpoints {
            if let url = value("AWS_ENDPOINT_URL_S3") {
                endpointSetting = ("AWS_ENDPOINT_URL_S3", url)
            } else if let url = value("AWS_ENDPOINT_URL") {
                endpointSetting = ("AWS_ENDPOINT_URL", url)
            } else if let url = fromConfig?["endpoint_url"], !url.isEmpty {
                endpointSetting = ("endpoint_url of profile \"\(profile)\"", url)
            }
        }
        if let setting = endpointSetting {
            let (name, text) = setting
            guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
                  scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty else {
                throw S3Error(message: "\(name) is not an http:// or https:// URL: \(text)")
            }
            var hostAndPort = host
            if let port = components.port { hostAndPort += ":\(port)" }
            let base = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
            endpoint = S3Address(scheme: scheme, host: hostAndPort, path: base)
        } else {
            endpoint = nil
        }
    }

    /// How a request for `location` is addressed: scheme, host (with its port), and the path.
    package func address(of location: S3Location) -> S3Address {
        guard let endpoint else {
            return S3Address(scheme: "https", host: "\(location.bucket).s3.\(region).amazonaws.com", path: "/" + location.key)
        }
        // A bucket's own address (a listing's, no key) has no slash after the bucket's name.
        let key = location.key.isEmpty ? "" : "/" + location.key
        return S3Address(scheme: endpoint.scheme, host: endpoint.host, path: endpoint.path + "/" + location.bucket + key)
    }

    private static func credentials(in section: [String: String]?) -> AWSCredentials? {
        guard let section, let id = section["aws_access_key_id"], !id.isEmpty,
              let secret = section["aws_secret_access_key"], !secret.isEmpty else { return nil }
        return AWSCredentials(accessKeyID: id, secretAccessKey: secret,
                              sessionToken: section["aws_session_token"].flatMap { $0.isEmpty ? nil : $0 })
    }

    private static func expand(_ path: String, home: String) -> String {
        path == "~" ? home : path.hasPrefix("~/") ? home + path.dropFirst(1) : path
    }

    /// The sections of an INI file as the AWS tools read them: `[name]`, `key = value` lines,
    /// `#` and `;` comments; indented lines (nested settings such as `s3 =`) are skipped.
    package static func sections(ofFile path: String) -> [String: [String: String]]? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return sections(of: text)
    }

    package static func sections(of text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline) {
            if rawLine.first == " " || rawLine.first == "\t" { continue }
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                let name = line.dropFirst().dropLast().split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
                current = name
                if sections[name] == nil { sections[name] = [:] }
            } else if let current, let equals = line.firstIndex(of: "=") {
                let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
                let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                sections[current]?[key] = value
            }
        }
        return sections
    }
}

#endif
