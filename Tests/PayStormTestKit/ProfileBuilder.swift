public import Foundation

/// A JSON5 profile assembled from typed values, for tests that run or load a profile.
///
/// Only what a test sets beyond the defaults below is rendered; everything else keeps the profile's defaults.
/// Settings the builder has no property for go in `extra` as raw JSON5 fields.
///
/// ```swift
/// var profile = ProfileBuilder(name: "silent", seed: 5, target: .init(webhookURL: url))
/// profile.schedule = [.constant(rate: 40, seconds: 4)]
/// let path = try profile.write(into: work)
/// ```
public struct ProfileBuilder: Sendable, Hashable {
    /// Where a run sends its traffic and how it reads back what the target granted.
    public struct Target: Sendable, Hashable {
        /// The endpoint that receives App Store Server Notifications.
        public var webhookURL: String?
        /// The endpoint that receives device-reported transactions.
        public var deviceURL: String?
        /// An HTTP probe's URL template (`{appAccountToken}` is filled in per account).
        public var probeURL: String?
        /// Seconds between safety probes (0: the final probe only); the profile's default when `nil`.
        public var probeIntervalSeconds: Double?
        /// The bundle identifier the signed payloads carry.
        public var bundleId: String?
        /// `Sandbox` or `Production`.
        public var environment: String?
        /// Seconds a request may take before it counts as timed out.
        public var requestTimeoutSeconds: Double?
        /// Runs against the ledger built into PayStorm instead of URLs.
        public var embeddedLedger = false
        /// Further target settings as raw JSON5 fields (`"flaws: [...]"`), rendered after the others.
        public var extra: [String] = []

        /// A target at the given URLs; `nil` leaves a setting out.
        public init(
            webhookURL: String? = nil,
            deviceURL: String? = nil,
            probeURL: String? = nil,
            bundleId: String? = nil,
            requestTimeoutSeconds: Double? = nil
        ) {
            self.webhookURL = webhookURL
            self.deviceURL = deviceURL
            self.probeURL = probeURL
            self.bundleId = bundleId
            self.requestTimeoutSeconds = requestTimeoutSeconds
        }

        /// The ledger built into PayStorm.
        public static var embeddedLedger: Target {
            var target = Target()
            target.embeddedLedger = true
            return target
        }
    }

    /// A product of the catalog.
    public struct Product: Sendable, Hashable {
        /// The product identifier.
        public var id: String
        /// `consumable`, `nonConsumable`, `nonRenewable` or `autoRenewable`.
        public var type: String
        /// The price in thousandths of the currency unit.
        public var priceMilli: Int
        /// An auto-renewable subscription's group.
        public var group: String?
        /// The subscription's level in its group (1 is the highest).
        public var level: Int?
        /// The subscription's period.
        public var periodSeconds: Double?

        /// A product; `group`, `level` and `periodSeconds` only for subscriptions.
        public init(
            _ id: String,
            _ type: String,
            priceMilli: Int,
            group: String? = nil,
            level: Int? = nil,
            periodSeconds: Double? = nil
        ) {
            self.id = id
            self.type = type
            self.priceMilli = priceMilli
            self.group = group
            self.level = level
            self.periodSeconds = periodSeconds
        }
    }

    /// A segment of the schedule.
    public struct Segment: Sendable, Hashable {
        /// The segment's JSON5 object.
        public var json5: String

        /// Actions at a constant `rate` per second for `seconds`.
        public static func constant(rate: Double, seconds: Double) -> Segment {
            Segment(json5: #"{ kind: "constant", rate: \#(json5Number(rate)), seconds: \#(json5Number(seconds)) }"#)
        }

        /// Actions from `from` to `to` per second over `seconds`.
        public static func ramp(from: Double, to: Double, seconds: Double) -> Segment {
            let rates = "from: \(json5Number(from)), to: \(json5Number(to))"
            return Segment(json5: #"{ kind: "ramp", \#(rates), seconds: \#(json5Number(seconds)) }"#)
        }
    }

    /// The profile's name (its reports folder is named after it).
    public var name: String
    /// The seed every random choice is drawn from.
    public var seed: UInt64
    /// Where the traffic goes.
    public var target: Target
    /// Subscription group identifiers of the catalog.
    public var groups: [String] = []
    /// The catalog's products; one consumable `c` at 0.99 unless set.
    public var products: [Product] = [Product("c", "consumable", priceMilli: 990)]
    /// The number of accounts; ten unless set.
    public var accounts = 10
    /// Devices per account; the profile's default when `nil`.
    public var devicesPerAccount: Int?
    /// The relative weights of the actions (`consumable`, `subscribe`, `refund`...); consumables only unless set.
    public var actionMix: [String: Double] = ["consumable": 1]
    /// The load schedule; two actions a second for two seconds unless set.
    public var schedule: [Segment] = [.constant(rate: 2, seconds: 2)]
    /// Faults by name (`duplicate`, `targetRestart`...), each its raw JSON5 object.
    public var faults: [String: String] = [:]
    /// Seconds to wait for the target to settle after the schedule; the profile's default when `nil`.
    public var settleSeconds: Double?
    /// The longest the settle may stretch; the profile's default when `nil`.
    public var settleMaxSeconds: Double?
    /// Threshold expressions (`errorRate < 1%`).
    public var thresholds: [String] = []
    /// Further top-level settings as raw JSON5 fields (`"timeCompression: { secondsPerMonth: 30 }"`), rendered
    /// last.
    public var extra: [String] = []

    /// A profile of ten accounts buying one consumable, two a second for two seconds, against `target`.
    public init(name: String, seed: UInt64, target: Target) {
        self.name = name
        self.seed = seed
        self.target = target
    }

    /// Writes the profile into `folder` and returns the file's path.
    @discardableResult
    public func write(into folder: String, fileName: String = "profile.json5") throws -> String {
        let path = URL(fileURLWithPath: folder).appendingPathComponent(fileName).path
        try json5.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Writes the profile into a fresh temporary folder (as `makeTemporaryFolder` makes) and returns the file;
    /// the caller removes its folder.
    public func writeToTemporaryFolder(_ prefix: String) throws -> URL {
        let folder = try makeTemporaryFolder(prefix)
        return URL(fileURLWithPath: try write(into: folder.path))
    }
}

/// A number as JSON5 writes it: whole numbers without a fraction.
func json5Number(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
}
