// swift-tools-version: 6.0
import PackageDescription

/// PayStorm: a load-testing and chaos harness for in-app purchase pipelines.
/// The pipeline flows one way: Profile → Simulation → Chaos → Load → Checking → Reporting.
///
/// The Swift modules as they depend on each other (C libraries and the shim left out; every arrow points
/// down; a module may also import any module below it, RunControl most of all):
///
///     paystorm → PayStormCLI → Capacity, TargetCheck, ShardMerge (drive runs: a run per capacity step, a
///                  │              │                                 one-request check, a merge of shards)
///                  │              └→ PayStorm (the run: Run/, MintPipeline/, Probes/, Target/, Outputs/)
///                  │                   ├→ TargetProcesses (the ledger process, commands, probes, provisioning)
///                  │                   │      ├→ RunControl (exit codes, RunError, Interruption)
///                  │                   │      └→ Checking, Profile
///                  │                   ├→ Checking → Chaos → Simulation → Profile → AppStoreModel
///                  │                   │      └→ TargetContract
///                  │                   ├→ Load → Primitives (the seeded generator, arrival maths, the heap, the
///                  │                   │         JSON value, the request counters; no dependencies:
///                  │                   │         AppStoreModel, Load, Reporting and above use it)
///                  │                   ├→ Reporting → Primitives
///                  │                   ├→ AppStoreServerAPI → Minting → Signing → AppStoreModel
///                  │                   │      └→ HTTPServer
///                  │                   └→ Minting, Signing, HTTPServer
///                  └→ ReferenceLedger → Signing, HTTPServer, TargetContract (started as a child process by a run)
///
/// The C libraries left out above, as the modules link them: Load → libcurl, zlib (the histogram codec), libdeflate
/// (the history's gzip chunks); Signing → OpenSSL; HTTPServer → libmicrohttpd; ReferenceLedger → SQLite.
let package = Package(
    name: "PayStorm",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "paystorm", targets: ["paystorm"])
    ],
    targets: [
        // System C libraries, from Debian -dev packages.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        // The one shim: typed wrappers for variadic C functions and macros, no logic.
        .target(name: "CPayStormShims", dependencies: ["COpenSSL", "CCurl", "CMicroHTTPD", "CSQLite"]),

        // The pipeline.
        // The leaf every stage shares: the one seeded generator, the arrival maths, the heap and the one JSON
        // value (pointers, escaping, scanning).
        .target(name: "Primitives"),
        .target(name: "AppStoreModel", dependencies: ["Primitives"]),
        // The probe contract: what a target grants one account, as the checker reads it and the reference ledger
        // writes it. No dependencies, so both sides import it without an edge up the pipeline.
        .target(name: "TargetContract"),
        .target(name: "Profile", dependencies: ["Primitives", "AppStoreModel"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "CPayStormShims"]),
        .target(name: "Signing", dependencies: ["Primitives", "AppStoreModel", "COpenSSL", "CPayStormShims"]),
        .target(name: "Minting", dependencies: ["Primitives", "AppStoreModel", "Signing", "Profile"]),
        .target(name: "Simulation", dependencies: ["Primitives", "AppStoreModel", "Profile"]),
        .target(name: "Chaos", dependencies: ["Primitives", "Simulation", "Profile", "AppStoreModel"]),
        .target(name: "Load", dependencies: ["Primitives", "CCurl", "CZlib", "CDeflate", "CPayStormShims"]),
        .target(
            name: "Checking",
            dependencies: ["Primitives", "Simulation", "Chaos", "Profile", "AppStoreModel", "TargetContract"]
        ),
        .target(name: "Reporting", dependencies: ["Primitives"]),
        .target(
            name: "ReferenceLedger",
            dependencies: [
                "Primitives", "AppStoreModel", "Signing", "HTTPServer", "CSQLite", "CPayStormShims", "TargetContract",
            ]
        ),
        // The App Store Server API as PayStorm plays it, beside the reference ledger: the run path feeds it.
        .target(
            name: "AppStoreServerAPI",
            dependencies: ["Primitives", "AppStoreModel", "Profile", "Simulation", "Signing", "Minting", "HTTPServer"]
        ),
        // How a command stops and ends: its exit codes, its errors, the interruption a signal sets.
        .target(name: "RunControl"),
        // The target's child processes: the embedded ledger, provisioning and probe commands, restarts' commands.
        .target(
            name: "TargetProcesses",
            dependencies: ["Primitives", "RunControl", "Profile", "Checking", "AppStoreModel", "CPayStormShims"]
        ),
        .target(
            name: "PayStorm",
            dependencies: [
                "RunControl", "TargetProcesses", "AppStoreModel", "Profile", "Signing", "Minting", "Simulation",
                "Chaos", "Load", "Checking", "Reporting", "HTTPServer", "CPayStormShims", "AppStoreServerAPI",
                "Primitives",
            ]
        ),
        // What drives runs: the capacity search (a run per step), the target check, the merge of shards' reports.
        .target(
            name: "Capacity",
            dependencies: ["Primitives", "PayStorm", "RunControl", "Load", "Profile", "Reporting"]
        ),
        .target(
            name: "TargetCheck",
            dependencies: [
                "PayStorm", "RunControl", "TargetProcesses", "AppStoreModel", "AppStoreServerAPI", "Chaos", "Checking",
                "Load", "Minting", "Primitives", "Profile", "Reporting", "Signing", "Simulation",
            ]
        ),
        .target(
            name: "ShardMerge",
            dependencies: ["PayStorm", "RunControl", "Checking", "Load", "Reporting", "Primitives"]
        ),
        .target(
            name: "PayStormCLI",
            dependencies: [
                "PayStorm", "Capacity", "TargetCheck", "ShardMerge", "RunControl", "AppStoreModel", "Profile",
                "Signing", "Primitives",
                "Minting", "Load", "ReferenceLedger",
                "Reporting", "HTTPServer", "AppStoreServerAPI", "Simulation",
            ]
        ),
        .executableTarget(name: "paystorm", dependencies: ["PayStormCLI"]),

        // What the test targets share (as swift-metrics' MetricsTestKit): the built binary and its package, process
        // and temporary-folder helpers, golden-file snapshots, a Python test server, a raw HTTP client and a
        // reference-ledger fixture.
        .target(
            name: "PayStormTestKit",
            dependencies: ["ReferenceLedger", "Primitives"],
            path: "Tests/PayStormTestKit"
        ),

        // Tests mirror the modules.
        .testTarget(name: "PrimitivesTests", dependencies: ["Primitives"]),
        .testTarget(name: "AppStoreModelTests", dependencies: ["AppStoreModel", "Primitives"]),
        .testTarget(name: "TargetContractTests", dependencies: ["TargetContract"]),
        .testTarget(
            name: "ProfileTests",
            dependencies: ["Profile", "Primitives", "AppStoreModel", "PayStormTestKit"]
        ),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "PayStormTestKit"]),
        .testTarget(name: "SigningTests", dependencies: ["Signing", "AppStoreModel", "HTTPServer", "PayStormTestKit"]),
        .testTarget(
            name: "MintingTests",
            dependencies: ["Minting", "Signing", "AppStoreModel", "Profile", "HTTPServer"]
        ),
        .testTarget(
            name: "SimulationTests",
            dependencies: ["Simulation", "Primitives", "Profile", "AppStoreModel", "PayStormTestKit"],
            exclude: ["Snapshots"]
        ),
        .testTarget(name: "ChaosTests", dependencies: ["Chaos", "Simulation", "Primitives", "Profile"]),
        .testTarget(
            name: "LoadTests",
            dependencies: ["Load", "Primitives", "CCurl", "PayStormTestKit"],
            exclude: ["Interop"]
        ),
        .testTarget(
            name: "CheckingTests",
            dependencies: ["Checking", "Simulation", "Chaos", "Primitives", "Profile", "AppStoreModel"]
        ),
        .testTarget(
            name: "ReportingTests",
            dependencies: ["Reporting", "Primitives", "PayStormTestKit"],
            exclude: ["Snapshots"]
        ),
        .testTarget(
            name: "ReferenceLedgerTests",
            dependencies: [
                "ReferenceLedger", "Signing", "Minting", "AppStoreModel", "PayStormTestKit", "TargetContract",
            ]
        ),
        .testTarget(
            name: "PayStormCLITests",
            dependencies: [
                "PayStormCLI", "PayStorm", "RunControl", "AppStoreModel", "Minting", "Signing", "PayStormTestKit",
            ],
            exclude: ["Snapshots"]
        ),
        .testTarget(name: "CapacityTests", dependencies: ["Capacity", "RunControl", "Load", "Reporting"]),
        .testTarget(
            name: "ShardMergeTests",
            dependencies: ["ShardMerge", "PayStorm", "RunControl", "Load", "Primitives", "Reporting"]
        ),
        .testTarget(name: "RunControlTests", dependencies: ["RunControl"]),
        .testTarget(name: "TargetProcessesTests", dependencies: ["TargetProcesses", "RunControl", "Checking"]),
        .testTarget(
            name: "PayStormTests",
            dependencies: [
                "PayStorm", "RunControl", "TargetProcesses", "TargetCheck", "Profile", "Simulation", "Chaos",
                "Checking", "Minting", "Primitives",
                "Signing", "AppStoreModel", "Load",
                "Reporting", "AppStoreServerAPI", "HTTPServer",
            ]
        ),
        .testTarget(
            name: "AppStoreServerAPITests",
            dependencies: [
                "AppStoreServerAPI", "AppStoreModel", "Simulation", "Signing", "Minting", "HTTPServer", "Profile",
            ]
        ),
        .testTarget(name: "EndToEndTests", dependencies: ["paystorm", "PayStormTestKit", "HTTPServer"]),
    ]
)

// Strict settings for every Swift target (C stays internal; explicit Sendable).
for target in package.targets where target.type != .system && target.name != "CPayStormShims" {
    var settings = target.swiftSettings ?? []
    settings.append(contentsOf: [
        .enableUpcomingFeature("InternalImportsByDefault"),
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
    ])
    target.swiftSettings = settings
}
