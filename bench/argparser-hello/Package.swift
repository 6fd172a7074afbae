// swift-tools-version:6.0
// The floor a swift-argument-parser tool cannot go below: one command, one option, built as keystore's install
// build is. bench/startup.sh times `keystore sign` with a session against it.
import PackageDescription

let package = Package(
    name: "argparser-hello",
    dependencies: [.package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")],
    targets: [.executableTarget(name: "hello", dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")])]
)
