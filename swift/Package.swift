// swift-tools-version: 6.2
// The FoundationModels plugin of open-apple-models for Deno: a dynamic library implementing the C ABI in
// ../ffi/oamfm.h. Build: swift build -c release --package-path swift --product OAMFoundationModels
import PackageDescription

let package = Package(
    name: "OAMFoundationModels",
    platforms: [.macOS("26.0")],
    products: [
        .library(name: "OAMFoundationModels", type: .dynamic, targets: ["OAMFoundationModels"]),
    ],
    targets: [
        .target(
            name: "OAMFoundationModels",
            path: "Sources/OAMFoundationModels",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ]
)
