// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "keystore",
    products: [
        .library(name: "StellarKeystore", targets: ["StellarKeystore"]),
        .executable(name: "keystore", targets: ["keystore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"])]
        ),
        .target(name: "CPlatform"),
        .target(name: "StellarKeystore", dependencies: ["CSodium", "CPlatform"]),
        .executableTarget(
            name: "keystore",
            dependencies: [
                "StellarKeystore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The fuzzing harness (fuzz/run); a plain build is the replayer the tests use for the saved inputs.
        .executableTarget(name: "keystore-fuzz", dependencies: ["StellarKeystore"]),
        .testTarget(name: "StellarKeystoreTests", dependencies: ["StellarKeystore"]),
        // An app's view of the library: public API only, no @testable.
        .testTarget(name: "PublicAPITests", dependencies: ["StellarKeystore"]),
        // Depending on the executable makes `swift test` build the binary the CLI tests run.
        .testTarget(name: "KeystoreCLITests", dependencies: ["keystore", "keystore-fuzz", "StellarKeystore"]),
    ]
)
