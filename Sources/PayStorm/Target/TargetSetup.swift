import Foundation
package import Load
import Primitives
package import Profile
package import Reporting
package import RunControl
package import Signing
import Simulation
package import TargetProcesses

/// The target of a run, ready to receive: its endpoints, the PKI it trusts, and the embedded ledger
/// process when the run started one.
package struct PreparedTarget {
    package var endpoints: Endpoints
    package var pki: TestPKI
    package var ledger: LedgerProcess?
    package var description: String
    /// What setting the target up found that the report should say (a provisioning command that printed only
    /// some of the accounts).
    var notes: [String] = []
}

extension PreparedTarget {
    /// Checks that the target answers, then provisions its accounts (the replayed one, else a shard's, else every
    /// account). Interrupted meanwhile, it stops there without failing: the caller then sends nothing and says it
    /// was interrupted.
    /// - Throws: `RunError.unreachable` when the target does not answer, or why provisioning failed.
    package mutating func connect(
        profile: Profile,
        with engine: LoadEngine,
        only account: String? = nil,
        shard: Shard? = nil,
        interruption: Interruption,
        log: @Sendable (String) -> Void
    ) throws(RunError) {
        do {
            guard !interruption.isInterrupted else { return }
            try TargetSetup.checkReachable(endpoints, with: engine)
            try TargetSetup.provision(
                &self,
                profile: profile,
                only: account,
                shard: shard,
                interruption: interruption,
                log: log
            )
        } catch  where interruption.isInterrupted {
            return
        }
    }
}

/// Starts or locates the target, and checks that it answers.
package enum TargetSetup {
    package static func prepare(
        profile: Profile,
        options: RunOptions,
        folder: ReportFolder,
        log: @Sendable (String) -> Void
    ) throws(RunError) -> PreparedTarget {
        let headers = profile.target.headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        if profile.target.embeddedLedger {
            return try embedded(profile: profile, options: options, folder: folder, headers: headers, log: log)
        }
        if !options.flaws.isEmpty {
            throw .badProfile("--flaw applies only to the embedded ledger (target.embeddedLedger: true)")
        }
        guard let directory = options.pkiDirectory else {
            throw .noInput(
                "an external target needs the test PKI it trusts: pass --pki DIR (made with 'paystorm pki init DIR')"
            )
        }
        let pki: TestPKI
        do {
            pki = try TestPKI.load(from: directory)
        } catch let error as PKIError {
            // As `paystorm pki show`: a PKI that is there but broken is malformed input (65), not missing (66).
            throw error.kind == .malformed ? .badInput(error.message) : .noInput(error.message)
        } catch {
            throw .noInput("cannot load the test PKI from \(directory): \(error)")
        }
        let probe = profile.target.probe
        guard let webhook = profile.target.webhook else {
            throw .badProfile("\(options.profilePath): target.webhookURL: expected an http(s) URL")
        }
        var endpoints = Endpoints(
            webhook: webhook,
            deviceDelivery: profile.target.deviceDelivery,
            deviceReport: profile.target.deviceReport,
            probe: (probe?.kind == .http || probe?.kind == .pointer) ? probe?.url : nil,
            headers: headers,
            probeMapping: probe?.kind == .pointer ? probe?.pointers : nil
        )
        endpoints.probeHeaders = probe?.headers ?? []
        return PreparedTarget(endpoints: endpoints, pki: pki, ledger: nil, description: profile.target.webhookURL ?? "")
    }

    private static func embedded(
        profile: Profile,
        options: RunOptions,
        folder: ReportFolder,
        headers: [(name: String, value: String)],
        log: @Sendable (String) -> Void
    ) throws(RunError) -> PreparedTarget {
        if let notice = ignoredPKINotice(profile: profile, options: options) { log(notice) }
        let pki: TestPKI
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("paystorm-\(UUID().uuidString)")
        let rootPath = work.appendingPathComponent("root.der").path
        do {
            // A fresh PKI for every run: nothing secret outlives it, and the ledger trusts exactly this root.
            pki = try TestPKI.generate()
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            try Data(pki.root.der).write(to: URL(fileURLWithPath: rootPath))
        } catch {
            throw .internalError("cannot create the run's test PKI: \(error)")
        }
        let ledger = LedgerProcess(
            executable: options.executablePath ?? currentExecutablePath(),
            database: folder.file("ledger.db").path,
            trustedRoot: rootPath,
            bundleId: profile.target.bundleId,
            environment: profile.target.environment,
            appAppleId: profile.target.appAppleId,
            flaws: options.flaws,
            logPath: folder.file("ledger.log").path
        )
        let address = try ledger.start()
        let flawText = options.flaws.isEmpty ? "correct" : "flaws: " + options.flaws.joined(separator: ", ")
        log("embedded reference ledger at \(address) (\(flawText))")
        let endpoints: Endpoints
        do {
            endpoints = Endpoints(
                webhook: try .contractV1(.webhook, url: "http://\(address)/notifications"),
                deviceDelivery: try .contractV1(.deviceDelivery, url: "http://\(address)/transactions"),
                deviceReport: try embeddedReport(url: "http://\(address)/transactions"),
                probe: "http://\(address)/accounts/{appAccountToken}",
                headers: headers,
                probeMapping: nil
            )
        } catch {
            ledger.stop()
            throw .internalError("the embedded ledger's URLs do not compile: \(error)")
        }
        return PreparedTarget(
            endpoints: endpoints,
            pki: pki,
            ledger: ledger,
            description: "embedded reference ledger at \(address) (\(flawText))"
        )
    }

    /// The embedded ledger's report role: contract v1, plus its answer `202 {"granted": 0}`, which says it
    /// credited nothing, read as "already had it" (so an acknowledged bare claim is known to be no forgery taken).
    static func embeddedReport(url: String) throws(TemplateError) -> RequestTemplate {
        var report = try RequestTemplate.contractV1(.deviceReport, url: url)
        report.responses.body = [
            .init(status: [202...202], pointer: "/granted", equals: .number("0"), means: .alreadyHad)
        ]
        return report
    }

    /// The line that says `--pki` has no effect, when it was given for the embedded ledger (which trusts a
    /// fresh PKI made for each run), so the flag is never silently ignored.
    static func ignoredPKINotice(profile: Profile, options: RunOptions) -> String? {
        guard profile.target.embeddedLedger, let given = options.pkiDirectory else { return nil }
        return "note: --pki \(given) is ignored: the embedded ledger trusts a fresh test PKI made for this run"
    }

    /// Connects to the webhook's host (with the TLS handshake for `https://`) without sending anything.
    /// - Throws: `RunError.unreachable` naming the URL and the failure.
    package static func checkReachable(_ endpoints: Endpoints, with engine: LoadEngine) throws(RunError) {
        if let failure = engine.probe(url: endpoints.webhook) {
            throw .unreachable("target \(endpoints.webhook) is unreachable: \(failure.error) (\(failure.detail))")
        }
    }

    /// Runs the profile's provisioning command once, before any traffic, so that templates and probes address
    /// each account the backend's way (`{account.id}`...). Nothing happens without one.
    /// - Parameters:
    ///   - only: the one account of a replay, if any.
    ///   - shard: the shard of a split run, if any: it provisions only its own accounts, so N shards do not
    ///     each create every account.
    /// - Throws: `RunError.unreachable` when the command fails (exit 69, its stderr quoted).
    package static func provision(
        _ target: inout PreparedTarget,
        profile: Profile,
        only: String?,
        shard: Shard? = nil,
        interruption: Interruption,
        log: @Sendable (String) -> Void
    ) throws(RunError) {
        guard let accounts = profile.target.accounts, let command = accounts.provision else { return }
        let tokens = accountsToProvision(profile: profile, only: only, shard: shard)
        target.endpoints.accounts = try AccountProvisioning.run(
            command,
            tokens: tokens,
            timeout: accounts.timeoutSeconds,
            interruption: interruption
        )
        let printed = target.endpoints.accounts.count
        log("provisioned \(printed) of \(tokens.count) accounts")
        if let note = provisionNote(printed: printed, of: tokens.count) {
            log("note: " + note)
            target.notes.append(note)
        }
    }

    /// The note for a provisioning command that printed fewer accounts than it was given, nil when it printed all.
    static func provisionNote(printed: Int, of given: Int) -> String? {
        guard printed < given else { return nil }
        return "target.accounts.provision printed \(printed) of the \(given) accounts it was given; the other "
            + "\(given - printed) keep their defaults ({account.id} is their appAccountToken, other account fields "
            + "are missing), so their requests and probes may not address the backend's accounts"
    }

    /// The tokens the backend dictated through provisioning, by account index, for `Profile.dictatedTokens`
    /// (empty when it dictated none).
    package static func dictatedTokens(_ directory: AccountDirectory, profile: Profile) -> [Int: String] {
        guard !directory.dictatedTokens.isEmpty else { return [:] }
        let identities = Identities(seed: profile.seed, namespace: profile.namespace)
        var tokens: [Int: String] = [:]
        for account in 0..<profile.population.accounts {
            let minted = AccountDirectory.normalized(identities.mintedToken(account))
            if let token = directory.dictatedTokens[minted] { tokens[account] = token }
        }
        return tokens
    }

    /// The accounts a run provisions: the replayed one, else the shard's, else every account.
    package static func accountsToProvision(profile: Profile, only: String?, shard: Shard?) -> [String] {
        if let only { return [only] }
        return (0..<profile.population.accounts).filter { shard?.contains(account: $0) ?? true }.map {
            World.appAccountToken(seed: profile.seed, namespace: profile.namespace, account: $0)
        }
    }
}
