// swift-tools-version: 6.0
// The FoundationModels plugin of open-apple-models for Deno: a dynamic library implementing the C ABI in
// ../ffi/oamfm.h. Build: swift build -c release --package-path swift --product OAMFoundationModels
//
// OAMCore never imports FoundationModels (transport, JSON, request parsing, the step race, error mapping,
// native session table, the scripted stand-in) and builds and tests with any Swift 6 toolchain on Linux or
// macOS. OAMFoundationModels adds the FoundationModels layer where the framework exists; elsewhere the same
// library plays `x-double` scripts like the C test double (ffi/fm_double.c), so the FFI tests can load it.
import PackageDescription

let package = Package(
    name: "OAMFoundationModels",
    platforms: [.macOS("26.0")],
    products: [
        .library(name: "OAMFoundationModels", type: .dynamic, targets: ["OAMFoundationModels"]),
    ],
    targets: [
        .target(name: "OAMCore", path: "Sources/OAMCore"),
        .target(
            name: "OAMFoundationModels", dependencies: ["OAMCore"], path: "Sources/OAMFoundationModels",
            // Deno unloads FFI libraries at exit while Swift's threads may still run library code; keep it
            // mapped (like the C double's -z nodelete). On macOS dyld never unloads images with Swift metadata.
            linkerSettings: [.unsafeFlags(["-Xlinker", "-z", "-Xlinker", "nodelete"], .when(platforms: [.linux]))]
        ),
        .testTarget(name: "OAMCoreTests", dependencies: ["OAMCore"], path: "Tests/OAMCoreTests"),
    ],
    swiftLanguageModes: [.v6]
)
