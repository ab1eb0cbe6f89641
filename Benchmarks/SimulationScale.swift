// The body of Benchmarks/simulation-scale.sh: streams a large world through chaos (and the oracle) and prints
// throughput and peak memory. Not part of the package build.
import Chaos
import Checking
import Foundation
import Profile
import Simulation

let arguments = CommandLine.arguments
let accounts = arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000
let target = arguments.count > 2 ? Int(arguments[2]) ?? 10_000_000 : 10_000_000
let useChecker = !arguments.contains("--no-checker")

// About 3.3 actions per arrival with this mix and two devices; renewals add more.
let seconds = 1000.0
let rate = Double(target) / 3.3 / seconds
let text = """
    {
      name: "scale", seed: 1,
      target: { embeddedLedger: true },
      catalog: {
        groups: [{ id: "g", gracePeriodSeconds: 5, billingRetrySeconds: 20 }],
        products: [
          { id: "coins", type: "consumable", priceMilli: 990 },
          { id: "pro", type: "nonConsumable", priceMilli: 4990 },
          { id: "gold", type: "autoRenewable", group: "g", level: 1, priceMilli: 9990, periodSeconds: 120 },
          { id: "silver", type: "autoRenewable", group: "g", level: 2, priceMilli: 4990, periodSeconds: 120 },
        ],
      },
      population: { accounts: \(accounts), devicesPerAccount: 2 },
      actionMix: { consumable: 3, nonConsumable: 1, subscribe: 2, cancel: 0.5, refund: 0.3, billingFailure: 0.3 },
      schedule: [{ kind: "constant", rate: \(rate), seconds: \(seconds) }],
      faults: { duplicate: { probability: 0.05 }, crashBeforeFinish: { probability: 0.02 },
                reorder: { probability: 0.1, windowSeconds: 1 }, forgery: { probability: 0.01 } },
    }
    """

func peakMemoryMB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        let kb = Double(line.split(separator: " ").dropFirst().first.map(String.init) ?? "0") ?? 0
        return kb / 1024
    }
    return -1
}

let profile = try Profile.decode(Data(text.utf8), file: "scale.json5")
let startMillis: Int64 = 1_800_000_000_000
// Checker tuning from the environment: PAYSTORM_FOLD_ABOVE, PAYSTORM_ENTRIES_PER_TRANSACTION.
var options = Checker.Options()
let environment = ProcessInfo.processInfo.environment
if let fold = environment["PAYSTORM_FOLD_ABOVE"].flatMap(Int.init) { options.foldAbove = fold }
if let entries = environment["PAYSTORM_ENTRIES_PER_TRANSACTION"].flatMap(Int.init) {
    options.entriesPerTransaction = entries
}
let checker = useChecker ? Checker(profile: profile, startMillis: startMillis, options: options) : nil
var chaos = ChaosStream(World(profile: profile, startMillis: startMillis), profile: profile)
let clock = ContinuousClock()
let began = clock.now
var deliveries = 0
var lastAction: UInt64 = 0
while let delivery = chaos.next() {
    deliveries += 1
    if delivery.copy == .original { lastAction = max(lastAction, delivery.action.sequence) }
    if let checker {
        checker.sent(delivery, at: delivery.at)
        if delivery.sends { checker.record(delivery, outcome: .acknowledged(status: 200), at: delivery.at) }
    }
}
let elapsed = began.duration(to: clock.now)
let secondsTaken = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
print("accounts: \(accounts)")
print("actions: \(lastAction + 1)")
print("deliveries (with chaos copies): \(deliveries)")
print("checker: \(useChecker ? "on (foldAbove \(options.foldAbove), entries \(options.entriesPerTransaction))" : "off")")
print(String(format: "seconds: %.1f", secondsTaken))
print(String(format: "actions per second: %.0f", Double(lastAction + 1) / secondsTaken))
print(String(format: "peak memory (VmHWM): %.0f MB", peakMemoryMB()))
