/// The faults of a run, each with its probability (per eligible delivery unless said otherwise) and parameters.
/// A fault absent from the profile is off.
public struct Faults: Sendable, Hashable, Decodable {
    /// The device posts the transaction, then crashes before `finish()`; it relaunches and redelivers.
    public var crashBeforeFinish: CrashBeforeFinish?
    /// The same webhook bytes arrive again (also concurrently, also after a 2xx).
    public var duplicate: Duplicate?
    /// The harness hangs up after sending, then retries like Apple.
    public var lostResponse: LostResponse?
    /// A device's listener starts late; its queued updates arrive in a burst.
    public var lateListener: LateListener?
    /// A refund arrives while the purchase's own deliveries are in flight (per purchase).
    public var refundMidStream: Probability?
    /// Notifications of one account are shuffled within a window (by delaying some, never sending one early).
    public var reorder: Reorder?
    /// A purchase goes through Ask to Buy: pending, then approved or declined (per purchase).
    public var askToBuy: AskToBuy?
    /// A forged variant of a delivery is sent as well (per delivery).
    public var forgery: Forgery?
    /// The request times out on the client side (an indeterminate outcome).
    public var networkTimeout: Probability?
    /// The connection is reset (a TCP RST) while the request is being written, before any response.
    public var networkReset: Probability?
    /// The target is killed and restarted by commands, `count` times at seeded instants.
    public var targetRestart: TargetRestart?
    /// The App Store retries webhooks the target did not acknowledge. Unlike the faults above it is on by
    /// default: it is how the App Store behaves, not a deviation from it.
    public var appStoreRetries = AppStoreRetries()

    /// Every forgery the run can send: the names of Minting's `Forgery`, and `bare-product-id`, a
    /// device's claim of a purchase with no signed transaction at all.
    public static let forgeryKinds = [
        "bad-signature", "alg-es384", "alg-none", "chain-2", "chain-4", "base64url-x5c", "missing-leaf-oid",
        "missing-intermediate-oid", "critical-oids", "untrusted-root", "wrong-bundle", "wrong-environment",
        "signed-date-before-chain", "dates-in-seconds", "tampered-payload", "forged-inner-transaction",
        bareProductIDForgery,
    ]

    /// How many times its quantity a `tampered-payload` transaction claims (changed after signing): what a
    /// target that skips verification credits, so the oracle's truth for the forgery says the same.
    public static let tamperedQuantityFactor = 10

    /// The forgeries of a device flow that pulls (``RequestTemplate/pulls``), which replace the JWS forgeries there:
    /// a transaction id the App Store never issued, and a genuine transaction id of another account.
    public static let pullForgeryKinds = ["made-up-transaction-id", "other-account-transaction-id"]

    /// The forgery that is no JWS at all: a device report claiming a purchase (`success`).
    public static let bareProductIDForgery = "bare-product-id"

    /// The forgeries a verifier with online checks on accepts, so that a run against such a target
    /// (``Target/verifierOnlineChecks``) does not send them: both are wrong only about *when* the chain
    /// was valid, and with online checks Apple's verifier validates the chain at the current time instead
    /// of at the payload's `signedDate` (reference §2.1 step 3c). Every other forgery is rejected either
    /// way. MintingTests checks this table against PayStorm's verifier run both ways.
    public static let forgeriesAcceptedWithOnlineChecks: Set<String> = ["signed-date-before-chain", "dates-in-seconds"]

    static let keys = [
        "crashBeforeFinish", "duplicate", "lostResponse", "lateListener", "refundMidStream", "reorder", "askToBuy",
        "forgery", "networkTimeout", "networkReset", "targetRestart", "appStoreRetries",
    ]

    /// No faults.
    public init() {}

    /// Strict decoding.
    public init(from decoder: any Decoder) throws {
        let f = try Fields(decoder, allowed: Self.keys)
        crashBeforeFinish = try f.optional("crashBeforeFinish")
        duplicate = try f.optional("duplicate")
        lostResponse = try f.optional("lostResponse")
        lateListener = try f.optional("lateListener")
        refundMidStream = try f.optional("refundMidStream")
        reorder = try f.optional("reorder")
        askToBuy = try f.optional("askToBuy")
        forgery = try f.optional("forgery")
        networkTimeout = try f.optional("networkTimeout")
        networkReset = try f.optional("networkReset")
        targetRestart = try f.optional("targetRestart")
        appStoreRetries = try f.value("appStoreRetries", default: AppStoreRetries())
    }

    /// A fault with only a probability.
    public struct Probability: Sendable, Hashable, Decodable {
        /// From 0 to 1.
        public var probability: Double
        /// Creates one.
        public init(probability: Double) { self.probability = probability }
        /// Strict decoding.
        public init(from decoder: any Decoder) throws {
            let f = try Fields(decoder, allowed: ["probability"])
            probability = try f.number("probability", in: 0...1, default: nil)
        }
    }

    /// Crash between deliver and finish.
    public struct CrashBeforeFinish: Sendable, Hashable, Decodable {
        /// Per device delivery.
        public var probability: Double
        /// Seconds until the app relaunches and redelivers its unfinished transactions.
        public var relaunchSeconds: Double
        /// Strict decoding.
        public init(from decoder: any Decoder) throws {
            let f = try Fields(decoder, allowed: ["probability", "relaunchSeconds"])
            probability = try f.number("probability", in: 0...1, default: nil)
            relaunchSeconds = try f.number("relaunchSeconds", in: 0...86_400, default: 2)
        }
    }

    /// Duplicate redelivery.
    public struct Duplicate: Sendable, Hashable, Decodable {
        /// Per webhook delivery.
        public var probability: Double
        /// Of the duplicates, the fraction sent at the same instant as the original.
        public var concurrent: Double
        /// Of the duplicates, the fraction sent only once the original got a 2xx.
        public var afterSuccess: Double
        /// Most extra copies of one delivery.
        public var maxCopies: Int
        /// Largest delay of a non-concurrent duplicate, in seconds.
        public var maxDelaySeconds: Double
        /// Strict decoding.
        public init(from decoder: any Decoder) throws {
            let f = try Fields(
                decoder,
                allowed: ["probability", "concurrent", "afterSuccess", "maxCopies", "maxDelaySeconds"]
            )
            probability = try f.number("probability", in: 0...1, default: nil)
            concurrent = try f.number("concurrent", in: 0...1, default: 0.3)
            afterSuccess = try f.number("afterSuccess", in: 0...1, default: 0.3)
            maxCopies = Int(try f.integer("maxCopies", in: 1...10, default: 2))
            maxDelaySeconds = try f.number("maxDelaySeconds", in: 0...86_400, default: 3)
            if concurrent + afterSuccess > 1 {
                throw ProfileIssue(
                    path: f.at("afterSuccess"),
                    expected: "concurrent + afterSuccess at most 1, found \(concurrent + afterSuccess)"
                )
            }
        }
    }

    /// Lost response: the request reaches the target, the answer is thrown away, Apple retries.
    public struct LostResponse: Sendable, Hashable, Decodable {
        /// Per delivery.
        public var probability: Double
        /// Seconds from the lost answer to the next attempt: the App Store's second attempt of the chain (later
        /// ones keep ``Faults/appStoreRetries``' schedule), or with those off the one retry.
        public var retrySeconds: Double
        /// Strict decoding.
        public init(from decoder: any Decoder) throws {
            let f = try Fields(decoder, allowed: ["probability", "retrySeconds"])
            probability = try f.number("probability", in: 0...1, default: nil)
            retrySeconds = try f.number("retrySeconds", in: 0...86_400, default: 2)
        }
    }

    /// Late listener start.
    public struct LateListener: Sendable, Hashable, Decodable {
        /// Per device launch.
        public var probability: Double
        /// How late the listener starts, in seconds; queued updates arrive in a burst then.
        public var delaySeconds: Double
        /// Strict decoding.
        public init(from decoder: any Decoder) throws {
            let f = try Fields(decoder, allowed: ["probability", "delaySeconds"])
            probability = try f.number("probability", in: 0...1, default: nil)
            delaySeconds = try f.number("delaySeconds", in: 0...86_400, default: 5)
        }
    }

    /// Reordering within a window.
    public struct Reorder: Sendable, Hashable, Decodable {
        /// Per webhook delivery: the chance it is delayed.
        public var probability: Double
        /// Largest delay, in seconds. Deliveries are only delayed, never sent before their `signedDate`.
        public var windowSeconds: Double
        /// Strict decoding.
        public init(from decoder: any Decoder) throws {
            let f = try Fields(decoder, allowed: ["probability", "windowSeconds"])
            probability = try f.number("probability", in: 0...1, default: nil)
            windowSeconds = try f.number("windowSeconds", in: 0...3600, default: 2)
        }
    }

    /// Ask to Buy.
    public struct AskToBuy: Sendable, Hashable, Decodable {
        /// Per purchase.
        public var probability: Double
        /// Seconds the purchase stays pending.
        public var pendingSeconds: Double
        /// The chance the parent approves.
        public var approveProbability: Double
        /// Strict decoding.
        public init(from decoder: any Decoder) throws {
            let f = try Fields(decoder, allowed: ["probability", "pendingSeconds", "approveProbability"])
            probability = try f.number("probability", in: 0...1, default: nil)
            pendingSeconds = try f.number("pendingSeconds", in: 0...86_400, default: 5)
            approveProbability = try f.number("approveProbability", in: 0...1, default: 0.5)
        }
    }

    /// Forgeries.
    public struct Forgery: Sendable, Hashable, Decodable {
        /// Per delivery.
        public var probability: Double
        /// Which forgeries, by Minting's names; all of ``Faults/forgeryKinds`` when absent.
        public var kinds: [String]

        /// The kinds a run sends to a target that verifies as `onlineChecks` says: without the forgeries
        /// such a verifier accepts, which would otherwise be counted as unlocks without a verified purchase.
        public func kinds(onlineChecks: Bool) -> [String] {
            onlineChecks ? kinds.filter { !Faults.forgeriesAcceptedWithOnlineChecks.contains($0) } : kinds
        }
        /// Strict decoding.
        public init(from decoder: any Decoder) throws {
            let f = try Fields(decoder, allowed: ["probability", "kinds"])
            probability = try f.number("probability", in: 0...1, default: nil)
            kinds = try f.value("kinds", default: Faults.forgeryKinds)
            if kinds.isEmpty { throw ProfileIssue(path: f.at("kinds"), expected: "at least one forgery name") }
            for (index, kind) in kinds.enumerated() where !Faults.forgeryKinds.contains(kind) {
                throw ProfileIssue(
                    path: f.at("kinds") + "[\(index)]",
                    expected: "one of \(Faults.forgeryKinds.joined(separator: ", ")), found \"\(kind)\""
                )
            }
        }
    }

    /// The App Store's retries of unacknowledged webhooks: the same bytes (same `notificationUUID`, same
    /// `signedDate`) again at these hours after the first attempt, compressed like every simulated period
    /// (hours × `secondsPerMonth` / 720 seconds), until one attempt is acknowledged, and never sooner than
    /// ``floorSeconds`` after the attempt before it was answered. A retry due while a planned `targetRestart` has
    /// the target down waits until it answers again, since a restart is not compressed (unless it falls inside
    /// the outage the restart declares, ``TargetRestart/outageHours``).
    ///
    /// Apple retries only in Production (the sandbox attempts once); they are on by default in every
    /// environment because a target must survive them wherever it runs. `enabled: false` plays the sandbox.
    public struct AppStoreRetries: Sendable, Hashable, Decodable {
        /// Whether unacknowledged webhooks are retried.
        public var enabled = true
        /// Hours after the first attempt at which each retry is due, ascending (Apple's: 1, 12, 24, 48, 72).
        public var scheduleHours = Self.appleScheduleHours
        /// The least real time between an attempt's answer and the retry that follows it, in seconds: compressed,
        /// Apple's hour lasts milliseconds, while a backend that answers 500 until its own state catches up needs
        /// time it can act on.
        public var floorSeconds = Self.defaultFloorSeconds

        /// The default ``floorSeconds``.
        public static let defaultFloorSeconds = 3.0

        /// Apple's documented retry schedule, in hours after the first attempt.
        public static let appleScheduleHours: [Double] = [1, 12, 24, 48, 72]

        /// Apple's schedule, on.
        public init() {}

        /// Strict decoding.
        public init(from decoder: any Decoder) throws {
            let f = try Fields(decoder, allowed: ["enabled", "scheduleHours", "floorSeconds"])
            enabled = try f.value("enabled", default: true)
            floorSeconds = try f.number("floorSeconds", in: 0...3600, default: Self.defaultFloorSeconds)
            scheduleHours = try f.value("scheduleHours", default: Self.appleScheduleHours)
            if scheduleHours.count > 20 {
                throw ProfileIssue(
                    path: f.at("scheduleHours"),
                    expected: "at most 20 retries, found \(scheduleHours.count)"
                )
            }
            var previous = 0.0
            for (index, hours) in scheduleHours.enumerated() {
                // Each retry comes after the attempt before it: a schedule out of order would retry early.
                guard hours.isFinite, hours > previous, hours <= 8_760 else {
                    throw ProfileIssue(
                        path: f.at("scheduleHours") + "[\(index)]",
                        expected: "hours after the first attempt, ascending, above 0 and at most 8760, found \(hours)"
                    )
                }
                previous = hours
            }
        }
    }

    /// Target kill and restart.
    public struct TargetRestart: Sendable, Hashable, Decodable {
        /// How many restarts during the run, at instants drawn from the seed.
        public var count: Int
        /// The argument vector that kills the target (no shell); empty with the embedded ledger, which the
        /// run kills with SIGKILL itself.
        public var killCommand: [String]
        /// The argument vector that starts it again; empty with the embedded ledger.
        public var startCommand: [String]
        /// Seconds between kill and start.
        public var downSeconds: Double
        /// Longest wait for the start command to exit and then for the target to accept connections; past it the
        /// restart is reported as failed.
        public var startTimeoutSeconds: Double
        /// The App Store time the outage stands for, in hours (compressed like every period; 0: none). The App
        /// Store's webhook attempts due within it after the kill fail as into a target that is down, even once the
        /// target is back in real time, so a notification whose retries it outlasts reaches the target only through
        /// the App Store Server API's notification history; retries due after it wait for the target as usual.
        public var outageHours: Double
        /// Strict decoding.
        public init(from decoder: any Decoder) throws {
            let f = try Fields(
                decoder,
                allowed: ["count", "killCommand", "startCommand", "downSeconds", "startTimeoutSeconds", "outageHours"]
            )
            count = Int(try f.integer("count", in: 0...1000, default: 1))
            killCommand = try f.value("killCommand", default: [])
            startCommand = try f.value("startCommand", default: [])
            downSeconds = try f.number("downSeconds", in: 0...3600, default: 1)
            startTimeoutSeconds = try f.number("startTimeoutSeconds", in: 1...3600, default: 60)
            outageHours = try f.number("outageHours", in: 0...8760, default: 0)
            if killCommand.isEmpty != startCommand.isEmpty {
                throw ProfileIssue(
                    path: f.at(killCommand.isEmpty ? "killCommand" : "startCommand"),
                    expected: "both killCommand and startCommand, or neither (embedded ledger)"
                )
            }
        }
    }
}
