package enum BatchRunKit { public static let version = "0.1.0" }
