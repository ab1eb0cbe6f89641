import AppStoreModel
import Dispatch
import Foundation
import Minting
import PayStorm
import RunControl
import Signing
import Synchronization

extension Command {
    /// `paystorm bench`: throughput of minting and verification, beside raw OpenSSL figures.
    static let bench = Command(
        name: "bench",
        summary: "measure minting and verification throughput against raw OpenSSL ES256",
        help: """
            paystorm bench: throughput benchmarks (figures depend on the machine and its load)

            Usage:
              paystorm bench mint [--seconds N] [--threads N] [--no-openssl-speed] [--only PHASE]
              paystorm bench verify [--seconds N] [--threads N] [--no-openssl-speed] [--only PHASE]
              paystorm bench ceiling PROFILE [--seconds N] [--rate-scale X] [--seed N] [--set NAME=VALUE]

            mint    notifications/s, each an outer signedPayload with a nested signedTransactionInfo and
                    signedRenewalInfo (3 ES256 signatures), on 1 thread and on N threads (default: all
                    cores), in three forms: the signing pipeline over pre-encoded payloads of Minter's
                    sizes, the full Minter (JSON encoding included, Minter.notification's Strings), and
                    as a run mints (Minter.notificationBody into the webhook body). Printed beside the
                    raw EVP_PKEY_sign rate of the same OpenSSL and beside the floor the format sets,
                    both measured in the same run: for the notification the pipeline signs, 3 raw signs
                    over precomputed digests plus the SHA-256 of every JWS's signing input
                    (base64url header '.' base64url payload) whole, and again with only the bytes after
                    what repeats from one notification to the next hashed. Each form's share of both
                    floors, per CPU-second, beside the goals: pipeline >= 0.95, full Minter >= 0.85.
                    Also 'openssl speed -seconds 3 ecdsap256'. RSS is printed before and after to show
                    memory flat.
            verify  notifications/s through SignedDataVerifier (outer, transaction and renewal info:
                    3 ES256 verifications plus decoding) beside the raw EVP_PKEY_verify rate.
            ceiling deliveries/s that a run of PROFILE can sign: its world, chaos and full Minter behind
                    the run's mint pipeline on every core, drained as fast as it signs, so the rate is
                    weighted by the profile's mix of deliveries and their signatures. A run's sending
                    rate is judged against it (Benchmarks/ceiling/run.sh). Prints
                    'ceiling: D deliveries/s (S signatures/s) on C cores over T s', the CPU
                    (user + system) spent per delivery, and the --rate-scale that puts the
                    profile's schedule at that ceiling.

            --seconds N          length of each measured phase (default 5)
            --threads N          threads for the multi-thread phases (default: active cores)
            --no-openssl-speed   skip the 'openssl speed' subprocess
            --only PHASE         run one phase alone, for a profiler such as 'perf record' (its rates
                                 only, no ratios): mint raw, floor, floor-kept, pipeline, minter or run;
                                 verify raw or verify

            """
    ) { arguments in
        var arguments = arguments
        guard let what = arguments.positional() else {
            throw CLIError(.usage, "missing benchmark (mint, verify or ceiling); run 'paystorm bench --help'")
        }
        if what == "ceiling" { return try benchCeiling(&arguments) }
        let seconds = try arguments.double("--seconds") ?? 5
        let threads = try arguments.int("--threads") ?? ProcessInfo.processInfo.activeProcessorCount
        let skipSpeed = arguments.flag("--no-openssl-speed")
        let only = try arguments.option("--only")
        try arguments.finish()
        guard seconds > 0, seconds <= 3600 else { throw CLIError(.usage, "--seconds must be in (0, 3600]") }
        guard threads > 0, threads <= 1024 else { throw CLIError(.usage, "--threads must be 1…1024") }
        if let only, let names = Bench.phaseNames[what], !names.contains(only) {
            throw CLIError(.usage, "--only: no phase '\(only)' in bench \(what) (\(names.joined(separator: ", ")))")
        }
        let bench = try Bench(seconds: seconds, threads: threads, opensslSpeed: !skipSpeed, only: only)
        switch what {
        case "mint": try bench.mint()
        case "verify": try bench.verify()
        default: throw CLIError(.usage, "unknown benchmark '\(what)' (mint, verify or ceiling)")
        }
        return .success
    }
}

/// One benchmark run: a fresh in-memory PKI and a Minter over it.
struct Bench {
    let seconds: Double
    let threads: Int
    let opensslSpeed: Bool
    /// The one phase to run, for a profiler; nil runs them all.
    let only: String?
    /// The phases `--only` can name, by benchmark, in the order they run.
    static let phaseNames = [
        "mint": ["raw", "floor", "floor-kept", "pipeline", "minter", "run"], "verify": ["raw", "verify"],
    ]
    let pki: TestPKI
    let minter: Minter
    let kind = NotificationKind(.subscribed, .initialBuy, .subscription)

    init(seconds: Double, threads: Int, opensslSpeed: Bool, only: String?) throws {
        self.seconds = seconds
        self.threads = threads
        self.opensslSpeed = opensslSpeed
        self.only = only
        do {
            pki = try TestPKI.generate()
        } catch {
            throw CLIError(.internalError, "cannot generate a PKI: \(error)")
        }
        minter = Minter(pki: pki)
    }

    func header(_ title: String) {
        print(
            "paystorm bench \(title): \(RawES256.openSSLVersion), \(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        print("phases of \(format(seconds)) s; multi-thread phases use \(threads) threads")
        print("RSS at start: \(residentMegabytes())")
    }

    func verify() throws {
        header("verify")
        let key = pki.leafKey
        let rawStep: @Sendable () throws -> () throws -> Int = {
            let raw = try RawES256(key: key)
            return { raw.verify(times: 16) ? 16 : 0 }
        }
        if opensslSpeed { printOpenSSLSpeed() }

        var pool: [String] = []
        for _ in 0..<64 { pool.append(try minter.notification(kind).signedPayload) }
        let notifications = pool
        let verifier: SignedDataVerifier
        do {
            verifier = try SignedDataVerifier(
                rootCertificates: [pki.root.der],
                enableOnlineChecks: false,
                environment: minter.app.environment,
                bundleId: minter.app.bundleId,
                appAppleId: minter.app.appAppleId
            )
        } catch {
            throw CLIError(.internalError, "cannot build the verifier: \(error)")
        }
        let step: @Sendable () throws -> () throws -> Int = {
            var index = Int.random(in: 0..<notifications.count)
            return {
                index = (index + 1) % notifications.count
                let outer = try verifier.verifyAndDecodeNotification(notifications[index]).get()
                guard let data = outer.data, let transaction = data.signedTransactionInfo,
                    let renewal = data.signedRenewalInfo
                else { throw CLIError(.internalError, "a minted notification lacks its nested JWS") }
                _ = try verifier.verifyAndDecodeTransaction(transaction).get()
                _ = try verifier.verifyAndDecodeRenewalInfo(renewal).get()
                return 1
            }
        }
        let phases = [("raw", rawStep), ("verify", step)]
        if try measureOnly(phases, benchmark: "verify") { return }
        let single = try interleaved(threads: 1, phases.map(\.1))
        let multi = try interleaved(threads: threads, phases.map(\.1))
        let (raw1, verified1, rawN, verifiedN) = (single[0], single[1], multi[0], multi[1])
        print("rates: wall-clock ops/s, and ops per CPU-second of the measuring threads (as 'openssl speed' counts);")
        print("each phase interleaves 0.25 s slices with the other so that outside load hits both alike")
        print("raw ES256 verify (EVP_PKEY_verify, one context, 32-byte digest):")
        printRawRate(1, raw1, unit: "verifies")
        printRawRate(threads, rawN, unit: "verifies")
        print(
            "notifications through SignedDataVerifier (outer + transaction + renewal info = 3 verifications + decoding):"
        )
        printNotificationRate(1, verified1, raw1, unit: "verifies")
        printNotificationRate(threads, verifiedN, rawN, unit: "verifies")
        print("RSS at end: \(residentMegabytes())")
    }

    /// With `--only`, runs that one phase on 1 thread and on all, prints its rates, and returns true.
    func measureOnly(
        _ phases: [(name: String, worker: @Sendable () throws -> () throws -> Int)],
        benchmark: String
    ) throws -> Bool {
        guard let only else { return false }
        // The command checked the name against `phaseNames`.
        guard let phase = phases.first(where: { $0.name == only }) else {
            throw CLIError(.internalError, "bench \(benchmark) has no phase '\(only)'")
        }
        print("phase '\(only)' alone (no ratios: the other phases did not run); operations/s and per CPU-second:")
        printRawRate(1, try interleaved(threads: 1, [phase.worker])[0], unit: "ops")
        printRawRate(threads, try interleaved(threads: threads, [phase.worker])[0], unit: "ops")
        print("RSS at end: \(residentMegabytes())")
        return true
    }

    private func label(_ threads: Int) -> String {
        threads == 1 ? "1 thread  " : "\(pad(threads)) threads"
    }

    func printRawRate(_ threads: Int, _ raw: BenchRate, unit: String) {
        print("  \(label(threads))  \(rate(raw.wall)) \(unit)/s   \(rate(raw.perCPUSecond)) \(unit)/CPU-s")
    }

    func printNotificationRate(
        _ threads: Int,
        _ notifications: BenchRate,
        _ raw: BenchRate,
        unit: String = "signs"
    ) {
        let share = String(format: "%.0f%%", notifications.perCPUSecond * 3 / raw.perCPUSecond * 100)
        print(
            "    \(label(threads))  \(rate(notifications.wall)) notifications/s   "
                + "\(rate(notifications.perCPUSecond)) notifications/CPU-s  (x3 = \(share) of raw \(unit)/CPU-s)"
        )
    }

    /// Measures several workers in alternating slices of at most 0.25 s until each has run `seconds`,
    /// so that load from other processes on a shared machine hits all of them alike.
    func interleaved(
        threads: Int,
        _ workers: [@Sendable () throws -> () throws -> Int]
    ) throws -> [BenchRate] {
        let rounds = max(1, Int((seconds / 0.25).rounded(.up)))
        let slice = seconds / Double(rounds)
        var totals = [BenchSample](repeating: BenchSample(), count: workers.count)
        for _ in 0..<rounds {
            for (index, worker) in workers.enumerated() {
                totals[index].add(try measure(threads: threads, seconds: slice, worker))
            }
        }
        return totals.map(\.rate)
    }

    /// Runs `threads` threads for `seconds`; each builds its worker, then counts operations until the
    /// deadline, timed from the end of its own setup on the wall clock and on its own CPU clock.
    private func measure(
        threads: Int,
        seconds: Double,
        _ makeWorker: @escaping @Sendable () throws -> () throws -> Int
    ) throws -> BenchSample {
        let results = Mutex<(sample: BenchSample, error: String?)>((BenchSample(), nil))
        let group = DispatchGroup()
        let duration = UInt64(seconds * 1e9)
        for _ in 0..<threads {
            group.enter()
            let thread = Thread {
                defer { group.leave() }
                do {
                    let step = try makeWorker()
                    let cpuStart = threadCPUSeconds()
                    let start = DispatchTime.now().uptimeNanoseconds
                    let deadline = start + duration
                    var count = 0
                    var now = start
                    while now < deadline {
                        count += try step()
                        now = DispatchTime.now().uptimeNanoseconds
                    }
                    let cpu = threadCPUSeconds() - cpuStart
                    let wall = Double(now - start) / 1e9
                    results.withLock {
                        $0.sample.count += Double(count)
                        $0.sample.wallSeconds += wall / Double(threads)
                        $0.sample.cpuSeconds += cpu
                    }
                } catch {
                    results.withLock { $0.error = "\(error)" }
                }
            }
            thread.start()
        }
        group.wait()
        let (sample, error) = results.withLock { ($0.sample, $0.error) }
        if let error { throw CLIError(.internalError, "benchmark worker failed: \(error)") }
        return sample
    }

    func printOpenSSLSpeed() {
        guard let openssl = executablePath("openssl") else {
            print("openssl speed: no openssl executable on PATH")
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = ["speed", "-seconds", "3", "ecdsap256"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            print("openssl speed: cannot run \(openssl): \(error)")
            return
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        // "256 bits ecdsa (nistp256)   0.0000s   0.0001s  41234.5  12345.6"
        guard let line = text.split(separator: "\n").last(where: { $0.contains("ecdsa (nistp256)") }) else {
            print("openssl speed -seconds 3 ecdsap256: no result line")
            return
        }
        let fields = line.split(separator: " ")
        guard fields.count >= 2, let sign = Double(fields[fields.count - 2]),
            let verify = Double(fields[fields.count - 1])
        else {
            print("openssl speed -seconds 3 ecdsap256: \(line)")
            return
        }
        print(
            "openssl speed -seconds 3 ecdsap256 (1 process, per user CPU-second): "
                + "\(rate(sign)) signs/s, \(rate(verify)) verifies/s"
        )
    }
}

private func rate(_ value: Double) -> String {
    let text = String(format: "%.0f", value)
    return String(repeating: " ", count: max(0, 8 - text.count)) + text
}

private func pad(_ threads: Int) -> String {
    let text = "\(threads)"
    return text.count < 2 ? text + " " : text
}

private func format(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
}
