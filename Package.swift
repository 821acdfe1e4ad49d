// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "batchrun",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "BatchRunKit", targets: ["BatchRunKit"]),
        .executable(name: "batchrun", targets: ["batchrun"]),
    ],
    // PostgreSQL stores and queues need PostgresNIO (and with it NIO and BoringSSL). A library
    // user who wants SQLite alone turns the trait off and builds none of them:
    // `.package(url: ..., traits: [])`. The fuzz build does (`make fuzz-build`).
    traits: [
        .trait(name: "PostgreSQL", description: "PostgreSQL stores and queues (PostgresNIO)"),
        // `http://` and `https://` feeds (AsyncHTTPClient); off, a remote feed is a job-file error.
        .trait(name: "NetworkFeeds", description: "HTTP(S) feeds (AsyncHTTPClient)"),
        // `@Model` classes and `#Filter` (BatchRunModels, docs/library.md): off by default, so that
        // the command line and a library user who does not want macros build no swift-syntax.
        .trait(name: "Macros", description: "SwiftData-style @Model declarations and #Filter (swift-syntax)"),
        .default(enabledTraits: ["PostgreSQL", "NetworkFeeds"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", exact: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        // Metrics (section 16): swift-metrics in the library, the Prometheus exporter and NIO's
        // HTTP/1 server (already built for PostgresNIO) in the executable's BatchRunServer.
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        // Remote feeds (section 14), behind the NetworkFeeds trait.
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        // S3 feeds and outputs: SigV4's HMAC-SHA256 and SHA-256 (already built for PostgresNIO).
        .package(url: "https://github.com/apple/swift-crypto", exact: "4.5.2"),
        // `serve`'s HTTP server: its router, sessions (`serve --actions`' sign-in cookie) and TLS.
        // Without its default traits (swift-configuration, full Foundation), as hummingbird-auth asks.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", exact: "2.5.0"),
        // Hummingbird's logger, silenced (`serve` prints what it says itself), and its header names.
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types", exact: "1.8.0"),
        // The `Macros` trait's compiler plugin (BatchRunMacros): the version of Swift 6.3's parser.
        .package(url: "https://github.com/swiftlang/swift-syntax", exact: "603.0.1"),
    ],
    targets: [
        // The library's layers, bottom to top (docs/development.md, "Modules"): each imports only
        // the ones below it, so a use that goes the wrong way does not compile.
        // The vocabulary every layer speaks: values, model, SQL, errors, conflicts, statuses,
        // metric names, and the backend protocol the two backends implement.
        .target(
            name: "BatchRunStore",
            dependencies: [.product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        .target(
            name: "BatchRunSQLite",
            dependencies: [
                "BatchRunStore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "BatchRunPostgres",
            dependencies: [
                "BatchRunStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // The Store coordinator (it picks a backend from the location) and the contexts.
        .target(
            name: "BatchRunContext",
            dependencies: [
                "BatchRunStore",
                "BatchRunSQLite",
                .target(name: "BatchRunPostgres", condition: .when(traits: ["PostgreSQL"])),
            ]
        ),
        // Feed readers over byte sources (file, HTTP, S3; gzip, zstd) and whole-or-nothing outputs.
        .target(
            name: "BatchRunFeeds",
            dependencies: [
                "BatchRunStore",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["NetworkFeeds"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NetworkFeeds"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["NetworkFeeds"])),
                .product(name: "NIOFoundationCompat", package: "swift-nio", condition: .when(traits: ["NetworkFeeds"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["NetworkFeeds"])),
                .product(name: "Crypto", package: "swift-crypto", condition: .when(traits: ["NetworkFeeds"])),
                "CBatchRunZlib",
                "CBatchRunZstd",
            ]
        ),
        // Job files, steps, the scheduler, runs and their reports.
        .target(
            name: "BatchRunEngine",
            dependencies: [
                "BatchRunStore",
                "BatchRunContext",
                "BatchRunFeeds",
                .product(name: "Yams", package: "Yams"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // Queues (a folder, a PostgreSQL database) and the worker.
        .target(
            name: "BatchRunQueue",
            dependencies: [
                "BatchRunStore",
                "BatchRunContext",
                "BatchRunEngine",
                .target(name: "BatchRunPostgres", condition: .when(traits: ["PostgreSQL"])),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ]
        ),
        // SwiftData-style models over the contexts: `@Model` classes, `#Filter`, relationships to walk.
        .target(
            name: "BatchRunModels",
            dependencies: ["BatchRunStore", "BatchRunContext", "BatchRunMacros"]
        ),
        // The compiler plugin that expands `@Model` and `#Filter` (built only for BatchRunModels).
        .macro(
            name: "BatchRunMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
                .product(name: "SwiftOperators", package: "swift-syntax"),
            ]
        ),
        // The one module a library user imports: it re-exports the layers' public API (and with
        // the `Macros` trait, the models').
        .target(
            name: "BatchRunKit",
            dependencies: ["BatchRunStore", "BatchRunContext", "BatchRunFeeds", "BatchRunEngine", "BatchRunQueue",
                           .target(name: "BatchRunModels", condition: .when(traits: ["Macros"]))]
        ),
        // Compressed feeds and outputs: the system's zlib and libzstd (the Makefile installs them).
        .systemLibrary(name: "CBatchRunZlib", path: "Sources/CBatchRunZlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CBatchRunZstd", path: "Sources/CBatchRunZstd", providers: [.apt(["libzstd-dev"])]),
        // The text and HTML renderings of reports and queues; the executable's, not the library's.
        .target(
            name: "BatchRunRender",
            dependencies: ["BatchRunKit"]
        ),
        // The executable's metrics exporters, JSON logs and HTTP server (`/metrics`, `serve`).
        .target(
            name: "BatchRunServer",
            dependencies: [
                "BatchRunKit",
                "BatchRunRender",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
                // `serve --tls-cert/--tls-key`: the page over HTTPS (already built for PostgresNIO).
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .executableTarget(
            name: "batchrun",
            dependencies: [
                "BatchRunKit",
                "BatchRunRender",
                "BatchRunServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // `batchrun --version` gives the commit it was built from (Plugins/BuildInfo).
            plugins: ["BuildInfo"]
        ),
        .plugin(name: "BuildInfo", capability: .buildTool(), path: "Plugins/BuildInfo"),
        .executableTarget(
            name: "batchrun-bench-scheduler",
            dependencies: ["BatchRunKit"],
            path: "bench/scheduler"
        ),
        .executableTarget(
            name: "batchrun-bench-library",
            dependencies: ["BatchRunKit"],
            path: "bench/library"
        ),
        .executableTarget(
            name: "batchrun-bench-checkpoints",
            dependencies: ["BatchRunKit"],
            path: "bench/checkpoints"
        ),
        // Fuzz targets for the job-file loader and the feed readers: a replay tool in a normal
        // build, a libFuzzer binary with `make fuzz` (docs/development.md).
        .executableTarget(
            name: "batchrun-fuzz",
            dependencies: ["BatchRunKit"],
            path: "fuzz/Sources"
        ),
        // What the tests that need a PostgreSQL server share: a throwaway server they start.
        .target(
            name: "TestSupport",
            dependencies: [
                // The HTTP(S) server the remote-feed tests start (HTTPFeedServer).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/TestSupport",
            exclude: ["pg-throwaway.sh", "moto-throwaway.sh", "moto-s3.py"]
        ),
        .testTarget(
            name: "BatchRunKitTests",
            dependencies: [
                "BatchRunKit",
                // The backends' own tests (a library user reaches them only through the Store).
                "BatchRunSQLite",
                "BatchRunPostgres",
                "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            // SigV4 vectors: AWS's test suite and botocore's signatures (their README names the sources).
            exclude: ["Steps/Feeds/Fixtures"]
        ),
        .testTarget(
            name: "BatchRunServerTests",
            dependencies: ["BatchRunServer", "BatchRunKit"]
        ),
        .testTarget(
            name: "BatchRunRenderTests",
            dependencies: ["BatchRunRender", "BatchRunKit", "TestSupport"]
        ),
        .testTarget(
            name: "BatchRunKitLibraryTests",
            dependencies: ["BatchRunKit", "TestSupport"]
        ),
        // `@Model` and `#Filter` (BatchRunModels, imported directly: the tests build it whatever the traits).
        .testTarget(
            name: "BatchRunModelsTests",
            dependencies: ["BatchRunKit", "BatchRunModels", "TestSupport"]
        ),
        .testTarget(
            name: "batchrunTests",
            dependencies: [
                "batchrun",
                "BatchRunKit",
                "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
