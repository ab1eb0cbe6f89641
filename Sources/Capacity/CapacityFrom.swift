import Foundation
import Load
import Reporting
public import RunControl

extension PayStormCapacity {
    /// Re-analyses steps already run (`paystorm capacity --from DIR...`), sending nothing.
    /// - Parameters:
    ///   - paths: capacity folders (their `steps/` are read) or step report folders (with `step.json`).
    ///   - slos: the objectives; empty: those of the first capacity folder's `capacity.json`.
    ///   - out: where to write the capacity files; nil: the capacity folder when exactly one was given, else a
    ///     new `<UTC time>-<profile>-<seed>-capacity` folder under `reports`.
    ///   - reports: the reports directory for a new folder.
    /// - Returns: the analysis and its folder.
    /// - Throws: `RunError`: `.noInput` for a missing folder or file, `.badInput` for a folder that is not a
    ///   capacity step or an objective that does not parse, `.cannotWrite` for the output.
    public static func analyse(
        paths: [String],
        slos: [String],
        out: String?,
        reports: String
    ) throws(RunError) -> CapacityOutcome {
        let (stepFolders, capacityFolders) = try folders(paths)
        let earlier = earlierReport(capacityFolders.first)
        let texts = slos.isEmpty ? earlier?.slos ?? [] : slos
        guard !texts.isEmpty else { throw .badInput("no SLO to judge the steps by: pass --slo") }
        let invariants = judgesInvariants(texts)
        let parsed: [Threshold]
        do {
            parsed = try parseSLOs(texts)
        } catch {
            throw .badInput("\(error)")
        }
        let outURL: URL? =
            out.map { URL(fileURLWithPath: $0).standardizedFileURL }
            ?? (capacityFolders.count == 1 && paths.count == 1 ? capacityFolders[0] : nil)
        let (steps, identity) = try readSteps(stepFolders, under: outURL, slos: parsed, invariants: invariants)
        let profile = identity?.profile ?? "capacity"
        let seed = identity?.seed ?? 0
        let target = try outputFolder(outURL, reports: reports, profile: profile, seed: seed)
        var report = CapacityReport(
            steps: steps,
            slos: expressions(parsed, invariants: invariants),
            profile: profile,
            seed: seed
        )
        // A re-analysis of one search keeps its label (a rewritten capacity.json would otherwise lose it).
        report.label = capacityFolders.count == 1 ? earlier?.label : nil
        do {
            try CapacityWriter.writeAll(report, to: target)
        } catch {
            throw .cannotWrite("\(error)")
        }
        return CapacityOutcome(report: report, folder: target, interruptedBy: nil)
    }

    /// An earlier analysis (its objectives, its label), from a capacity folder's `capacity.json`.
    private static func earlierReport(_ folder: URL?) -> CapacityReport? {
        guard let folder else { return nil }
        let file = folder.appendingPathComponent("capacity.json")
        guard let data = FileManager.default.contents(atPath: file.path),
            let earlier = try? JSONDecoder().decode(CapacityReport.self, from: data)
        else { return nil }
        return earlier
    }

    /// Judges every step folder; the profile and seed are the first step's.
    private static func readSteps(
        _ stepFolders: [URL],
        under outURL: URL?,
        slos: [Threshold],
        invariants: Bool
    ) throws(RunError) -> (steps: [CapacityStep], identity: (profile: String, seed: UInt64)?) {
        var steps: [CapacityStep] = []
        var identity: (profile: String, seed: UInt64)?
        for folder in stepFolders {
            do {
                let read = try CapacityStepReader.read(
                    folder,
                    name: name(of: folder, under: outURL),
                    slos: slos,
                    invariants: invariants
                )
                steps.append(read.step)
                identity = identity ?? (read.profile, read.seed)
            } catch {
                throw error.missing ? .noInput(error.description) : .badInput(error.description)
            }
        }
        return (steps, identity)
    }

    /// The folder the capacity files go to: `outURL` as it is, else a new one under `reports`.
    private static func outputFolder(
        _ outURL: URL?,
        reports: String,
        profile: String,
        seed: UInt64
    ) throws(RunError) -> URL {
        do {
            if let outURL { return try ReportFolder(exactly: outURL).url }
            return try ReportFolder(
                root: URL(fileURLWithPath: reports),
                profile: profile,
                seed: seed,
                label: "capacity"
            ).url
        } catch {
            throw .cannotWrite("\(error)")
        }
    }

    /// The step folders to read and the capacity folders among `paths`.
    private static func folders(_ paths: [String]) throws(RunError) -> (steps: [URL], capacity: [URL]) {
        let files = FileManager.default
        var stepFolders: [URL] = []
        var capacityFolders: [URL] = []
        // Each step once: the same folder twice (or a capacity folder and one of its steps) would count its
        // figures twice in the fit.
        var givenBy: [String: String] = [:]
        func once(_ step: URL, _ path: String) throws(RunError) {
            let key = step.resolvingSymlinksInPath().path
            if let earlier = givenBy[key] {
                throw .badInput("\(path): step \(key) is already given by \(earlier); give each folder once")
            }
            givenBy[key] = path
        }
        for path in paths {
            let url = URL(fileURLWithPath: path).standardizedFileURL
            var isDirectory: ObjCBool = false
            guard files.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw .noInput("\(path): no such folder")
            }
            if files.fileExists(atPath: url.appendingPathComponent(CapacityStepPlan.fileName).path) {
                try once(url, path)
                stepFolders.append(url)
                continue
            }
            let steps = url.appendingPathComponent("steps")
            let names = ((try? files.contentsOfDirectory(atPath: steps.path)) ?? []).sorted()
            // Each step's run links `steps/latest` to its folder: a link is not a step of its own.
            let found = names.map { steps.appendingPathComponent($0) }
                .filter { (try? files.destinationOfSymbolicLink(atPath: $0.path)) == nil }
                .filter { files.fileExists(atPath: $0.appendingPathComponent(CapacityStepPlan.fileName).path) }
            guard !found.isEmpty else {
                throw .badInput(
                    "\(path): neither a capacity folder (steps/*/step.json) nor a capacity step (step.json)"
                )
            }
            for step in found { try once(step, path) }
            capacityFolders.append(url)
            stepFolders += found
        }
        return (stepFolders, capacityFolders)
    }

    /// A step folder's name as the report refers to it: relative to the output folder when inside it, else its
    /// full path (a name relative to a new folder could not be found from it).
    private static func name(of folder: URL, under out: URL?) -> String {
        guard let out, folder.path.hasPrefix(out.path + "/") else { return folder.path }
        return String(folder.path.dropFirst(out.path.count + 1))
    }
}
