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
        // tpm2-tss ESAPI with the TCTI loader (Debian: libtss2-dev), for TPM-bound vaults.
        .systemLibrary(
            name: "CTSS2",
            providers: [.apt(["libtss2-dev"])]
        ),
        .target(name: "CPlatform"),
        .target(name: "StellarKeystore", dependencies: ["CSodium", "CTSS2", "CPlatform"]),
        .executableTarget(
            name: "keystore",
            dependencies: [
                "StellarKeystore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The fuzzing harness (fuzz/run); a plain build is the replayer the tests use for the saved inputs.
        .executableTarget(name: "keystore-fuzz", dependencies: ["StellarKeystore"]),
        // A private swtpm per test suite, for the TPM-bound vault tests.
        .target(name: "SoftwareTPM", path: "Tests/SoftwareTPM"),
        .testTarget(name: "StellarKeystoreTests", dependencies: ["StellarKeystore", "SoftwareTPM"]),
        // An app's view of the library: public API only, no @testable.
        .testTarget(name: "PublicAPITests", dependencies: ["StellarKeystore", "SoftwareTPM"]),
        // Depending on the executable makes `swift test` build the binary the CLI tests run.
        .testTarget(name: "KeystoreCLITests", dependencies: ["keystore", "keystore-fuzz", "StellarKeystore", "SoftwareTPM"]),
    ]
)
