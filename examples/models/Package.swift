// swift-tools-version:6.1
// A library user's package (docs/library.md, "Models"): BatchRunKit by path, with the `Macros`
// trait (and without PostgreSQL or HTTP feeds, so neither NIO nor BoringSSL is built).
//
//     swift run -c release airline-models
import PackageDescription

let package = Package(
    name: "airline-models",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "batchrun", path: "../..", traits: ["Macros"]),
    ],
    targets: [
        .executableTarget(
            name: "airline-models",
            dependencies: [.product(name: "BatchRunKit", package: "batchrun")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
