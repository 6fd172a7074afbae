// swift-tools-version:6.2
import PackageDescription

// The architecture, as SwiftPM enforces it: each target imports only the ones below it, so a cycle or a
// library that reaches for the command line does not compile. ARCHITECTURE.md says what lives where.
//
//   keystore (CLI) ──> StellarKeystoreTPM ──> StellarKeystore ──> StellarTransactions ──> StellarKeys ──> StellarText
//                  ├──> StellarKeystoreAgent ──┘                    │                  CSodium, CPlatform
//                  └──> StellarWebAuth ─────────────────────────────┘
//   StellarKeystoreTPM ──> CTSS2 (tpm2-tss, loaded at run time)
//   StellarKeystore ──> CPKCS11 (a PKCS#11 module the user names, loaded at run time)
//   StellarWebAuth ──> CCurl (libcurl, loaded at run time)
// Every target builds without a warning: one is an error, so that none piles up unseen.
let warningsAreErrors: [SwiftSetting] = [.treatAllWarnings(as: .error)]
// The test targets compile whole-module where CI is set (CI=true bash .ci/run): a clean build, which is all CI makes,
// then type-checks each test module once, where batch mode type-checks its declarations again in every batch and
// in a separate module job. A developer's rebuild after editing one test file keeps batch mode, which recompiles
// that file's batch only. Test targets alone: unsafe flags in a library target would stop an app depending on it.
let testSettings: [SwiftSetting] = warningsAreErrors
    + (Context.environment["CI"] == "true" ? [.unsafeFlags(["-wmo", "-num-threads", "2"], .when(configuration: .debug))] : [])

let package = Package(
    name: "keystore",
    products: [
        // What an app depends on: no tpm2-tss anywhere in its graph.
        .library(name: "StellarKeystore", targets: ["StellarKeystore"]),
        // TPM-bound vaults on Linux: plugs a TPM into StellarKeystore's vaults.
        .library(name: "StellarKeystoreTPM", targets: ["StellarKeystoreTPM"]),
        // The signing agent's server, for an app that embeds one as the tool does (threads, signal handlers, a log):
        // an app that only talks to an agent needs StellarKeystore alone, which has the client and the protocol.
        .library(name: "StellarKeystoreAgent", targets: ["StellarKeystoreAgent"]),
        // SEP-10 and SEP-45 sign-in over HTTPS (libcurl, loaded when used). An app with its own HTTP client needs
        // only StellarKeystore: the checks are `WebAuthChallenge` and `ContractWebAuthChallenge`, in StellarTransactions.
        .library(name: "StellarWebAuth", targets: ["StellarWebAuth"]),
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
        // tpm2-tss's headers (Debian: libtss2-dev) for its types and constants; its libraries are opened only
        // when a TPM is used.
        .target(name: "CTSS2", linkerSettings: [.linkedLibrary("dl")]),
        // libcurl's headers (Debian: libcurl4-openssl-dev) for its types and constants; libcurl.so.4 is opened only
        // by a web sign-in.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("dl")]),
        // PKCS#11 3.0's types and function lists, written from the specification (no system header needed); a
        // module (a YubiKey's, an HSM's, SoftHSM2) is opened by its path only when a key in a token is used.
        .target(name: "CPKCS11", linkerSettings: [.linkedLibrary("dl")]),
        // Text read from outside and text shown to a person, with no key in sight: StrictJSON (the one JSON reader
        // for input from outside), TOML's bare-key bytes, TerminalText (escaping for a terminal), EditDistance.
        // The bottom layer, so that every library reads and shows text one way.
        .target(name: "StellarText", swiftSettings: warningsAreErrors),
        // Keys and what is done with them alone: libsodium, secret memory, StrKeys, SEP-53, SEP-5 phrases.
        .target(name: "StellarKeys", dependencies: ["StellarText", "CSodium", "CPlatform"], swiftSettings: warningsAreErrors),
        // Transaction envelopes: the generated strict XDR reader, hashes, signatures spliced in, summaries.
        .target(name: "StellarTransactions", dependencies: ["StellarKeys", "StellarText"], swiftSettings: warningsAreErrors),
        // Vaults, attempts, backups, sessions, import, and the `Keystore` façade an app or the CLI calls.
        .target(name: "StellarKeystore", dependencies: ["StellarKeys", "StellarTransactions", "StellarText", "CPlatform", "CPKCS11"], swiftSettings: warningsAreErrors),
        .target(name: "StellarKeystoreTPM", dependencies: ["StellarKeystore", "StellarKeys", "CTSS2"], swiftSettings: warningsAreErrors),
        // The signing agent's server: the socket it listens on, a thread per connection, the keys it holds, the
        // questions it puts to its person, its log and its signals. Above the app library, so that an app that
        // only talks to an agent links none of it.
        .target(name: "StellarKeystoreAgent", dependencies: ["StellarKeystore", "StellarKeys", "StellarTransactions", "StellarText"], swiftSettings: warningsAreErrors),
        // SEP-10 and SEP-45 web authentication: stellar.toml, the challenge fetched, verified, signed and sent back.
        .target(name: "StellarWebAuth", dependencies: ["StellarTransactions", "StellarKeys", "StellarText", "CCurl"], swiftSettings: warningsAreErrors),
        // The command line's body: parsing, prompts, hints, exit codes and printing, a library so that tests run it
        // in-process; the executable below only calls it.
        .target(
            name: "KeystoreCLI",
            dependencies: [
                "StellarText", "StellarKeys", "StellarTransactions", "StellarKeystore", "StellarKeystoreAgent", "StellarKeystoreTPM", "StellarWebAuth", "CPlatform",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: warningsAreErrors
        ),
        .executableTarget(name: "keystore", dependencies: ["KeystoreCLI"], swiftSettings: warningsAreErrors),
        // The fuzzing harness (fuzz/run); a plain build is the replayer the tests use for the saved inputs.
        .executableTarget(name: "keystore-fuzz", dependencies: ["StellarText", "StellarKeys", "StellarTransactions", "StellarKeystore", "StellarKeystoreAgent", "StellarWebAuth"], swiftSettings: warningsAreErrors),
        // A private swtpm per test suite, for the TPM-bound vault tests; the published vectors under fixtures/.
        .target(name: "SoftwareTPM", path: "Tests/SoftwareTPM", swiftSettings: testSettings),
        // A private SoftHSM2 token directory with one token, for the PKCS#11 tests.
        .target(name: "SoftwareToken", path: "Tests/SoftwareToken", swiftSettings: testSettings),
        .target(name: "TestFixtures", dependencies: ["StellarKeys"], path: "Tests/TestFixtures", swiftSettings: testSettings),
        // pyca/cryptography in a virtualenv: an independent verifier of the TPM's P-256 signatures.
        .target(name: "PythonCryptography", path: "Tests/PythonCryptography", swiftSettings: testSettings),
        // One test target per library target.
        .testTarget(name: "StellarTextTests", dependencies: ["StellarText"], swiftSettings: testSettings),
        .testTarget(name: "StellarKeysTests", dependencies: ["StellarKeys", "TestFixtures"], swiftSettings: testSettings),
        .testTarget(name: "StellarTransactionsTests", dependencies: ["StellarTransactions", "StellarKeys", "StellarText", "TestFixtures"], swiftSettings: testSettings),
        .testTarget(name: "StellarKeystoreTests", dependencies: ["StellarKeystore", "StellarKeys", "StellarTransactions", "StellarText", "TestFixtures", "SoftwareToken"], swiftSettings: testSettings),
        .testTarget(name: "StellarKeystoreAgentTests", dependencies: ["StellarKeystoreAgent", "StellarKeystore", "StellarKeys", "StellarTransactions", "StellarText", "TestFixtures"], swiftSettings: testSettings),
        .testTarget(name: "StellarKeystoreTPMTests",
                    dependencies: ["StellarKeystoreTPM", "StellarKeystore", "StellarKeys", "SoftwareTPM", "TestFixtures", "PythonCryptography"], swiftSettings: testSettings),
        .testTarget(name: "StellarWebAuthTests", dependencies: ["StellarWebAuth", "StellarKeystore", "StellarText", "StellarKeys", "StellarTransactions", "TestFixtures"], swiftSettings: testSettings),
        // An app's view of the library: public API only, no @testable.
        .testTarget(name: "PublicAPITests", dependencies: ["StellarKeystore", "StellarKeystoreTPM", "StellarKeys", "StellarTransactions", "SoftwareTPM", "TestFixtures"], swiftSettings: testSettings),
        // Depending on the executable makes `swift test` build the binary the CLI tests run.
        .testTarget(name: "KeystoreCLITests", dependencies: ["keystore", "KeystoreCLI", "keystore-fuzz", "StellarKeystore", "StellarKeystoreAgent", "StellarKeystoreTPM", "StellarWebAuth", "StellarKeys", "StellarTransactions", "SoftwareTPM", "SoftwareToken", "PythonCryptography", "TestFixtures"], swiftSettings: testSettings),
    ]
)
