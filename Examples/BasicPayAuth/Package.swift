// swift-tools-version:6.0
// A SwiftBasicPay-style sign-up/sign-in flow that depends on the StellarKeystore product alone, as an app would.
// Built and run by the tests (ExampleAppTests); run it yourself with: swift run --package-path Examples/BasicPayAuth
import PackageDescription

let package = Package(
    name: "BasicPayAuth",
    dependencies: [.package(name: "keystore", path: "../..")],
    targets: [
        // Warnings are errors here: an `await` that picked a synchronous overload (a warning) fails the build.
        .executableTarget(name: "BasicPayAuth", dependencies: [.product(name: "StellarKeystore", package: "keystore")],
                          swiftSettings: [.unsafeFlags(["-warnings-as-errors"])]),
    ]
)
