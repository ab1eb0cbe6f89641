import Foundation
import PayStormTestKit
import Testing

/// `deploy/kubernetes/paystorm-job.yaml`, parsed as YAML (PyYAML, in a venv made on first use when the
/// system Python lacks it): an Indexed Job whose pods pass `JOB_COMPLETION_INDEX` to `--shard`, a shared
/// volume for the reports, and a merge Job reading the same volume.
struct KubernetesManifestTests {
    /// The manifest's documents as JSON values.
    static func documents() throws -> [[String: Any]] {
        let root = PayStormBinary.packageRoot
        var python = "python3"
        if try run(["python3", "-c", "import yaml"]).0 != 0 {
            let venv = root.appendingPathComponent(".build/pyyaml-venv").path
            python = try run([root.appendingPathComponent("scripts/python-venv.sh").path, venv, "yaml", "pyyaml"]).1
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let script = "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))"
        let manifest = root.appendingPathComponent("deploy/kubernetes/paystorm-job.yaml").path
        let (code, output) = try run([python, "-c", script, manifest])
        #expect(code == 0, "\(output)")
        let json = try JSONSerialization.jsonObject(with: Data(output.utf8))
        return try #require(json as? [[String: Any]])
    }

    static func run(_ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func job(_ documents: [[String: Any]], named name: String) throws -> [String: Any] {
        try #require(
            documents.first {
                $0["kind"] as? String == "Job" && ($0["metadata"] as? [String: Any])?["name"] as? String == name
            }
        )
    }

    @Test func shardJobIsIndexedAndPassesItsIndexToShard() throws {
        let documents = try Self.documents()
        let spec = try #require(try Self.job(documents, named: "paystorm-shards")["spec"] as? [String: Any])
        #expect(spec["completionMode"] as? String == "Indexed")
        let completions = try #require(spec["completions"] as? Int)
        #expect(spec["parallelism"] as? Int == completions)
        let pod = try #require((spec["template"] as? [String: Any])?["spec"] as? [String: Any])
        let container = try #require((pod["containers"] as? [[String: Any]])?.first)
        let args = try #require(container["args"] as? [String])
        #expect(args.first == "run")
        let shard = try #require(args.firstIndex(of: "--shard"))
        #expect(args[shard + 1] == "$(JOB_COMPLETION_INDEX)/\(completions)")
        #expect(args.contains("--seed"), "every shard must run the same seed")
        // The reports go onto the shared volume.
        let reports = try #require(args.firstIndex(of: "--reports"))
        let mounts = try #require(container["volumeMounts"] as? [[String: Any]])
        let reportsMount = try #require(
            mounts.first { args[reports + 1].hasPrefix(($0["mountPath"] as? String) ?? "?") }
        )
        let volumes = try #require(pod["volumes"] as? [[String: Any]])
        let volume = try #require(volumes.first { $0["name"] as? String == reportsMount["name"] as? String })
        let claim = try #require((volume["persistentVolumeClaim"] as? [String: Any])?["claimName"] as? String)
        let pvc = try #require(documents.first { $0["kind"] as? String == "PersistentVolumeClaim" })
        #expect((pvc["metadata"] as? [String: Any])?["name"] as? String == claim)
        #expect(((pvc["spec"] as? [String: Any])?["accessModes"] as? [String]) == ["ReadWriteMany"])
    }

    @Test func mergeJobMergesEveryShardFromTheSameVolume() throws {
        let documents = try Self.documents()
        let shards = try #require(try Self.job(documents, named: "paystorm-shards")["spec"] as? [String: Any])
        let count = try #require(shards["completions"] as? Int)
        let spec = try #require(try Self.job(documents, named: "paystorm-merge")["spec"] as? [String: Any])
        let pod = try #require((spec["template"] as? [String: Any])?["spec"] as? [String: Any])
        let container = try #require((pod["containers"] as? [[String: Any]])?.first)
        let command = try #require(container["command"] as? [String]).joined(separator: " ")
        #expect(command.contains(#"paystorm merge "$RUN_DIR"/*-shard*of"$SHARDS" --out "$RUN_DIR"/merged"#))
        let env = try #require(container["env"] as? [[String: Any]])
        #expect(env.contains { $0["name"] as? String == "RUN_DIR" && $0["value"] as? String == "/reports/run" })
        #expect(env.contains { $0["name"] as? String == "SHARDS" && $0["value"] as? String == String(count) })
        let volumes = try #require(pod["volumes"] as? [[String: Any]])
        #expect(
            volumes.contains {
                ($0["persistentVolumeClaim"] as? [String: Any])?["claimName"] as? String == "paystorm-reports"
            }
        )
    }
}
