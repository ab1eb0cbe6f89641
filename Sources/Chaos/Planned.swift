public import Simulation

/// One request the run will send (or one marker it records): a clean action, possibly reshaped by faults.
public struct PlannedDelivery: Sendable, Hashable {
    /// Unique within a run. Planned deliveries count up from 1; follow-ups use ``ChaosPolicy/followUpID(of:_:)``.
    public var id: UInt64
    /// The action this delivery carries. For a forged copy, its transaction and notification IDs are fresh and
    /// its truth is `.none`: nothing is owed for it.
    public var action: Action
    /// Intended send time, seconds since the start of the run.
    public var at: Double
    /// What kind of copy this is.
    public var copy: Copy
    /// Resend the exact signed bytes of this earlier delivery instead of minting again (duplicates, retries,
    /// redeliveries: Apple and StoreKit resend, they do not re-sign).
    public var sameBytesAs: UInt64?
    /// Mint this forgery (a Minting `Forgery` raw name) instead of the genuine signature.
    public var forgery: String?
    /// A network fault Load must play for this request.
    public var network: NetworkFault?
    /// Device deliveries: the app crashes before `finish()`; it relaunches after this many seconds and
    /// redelivers the transaction whatever the answer was.
    public var crashRelaunchSeconds: Double?
    /// Delays of duplicates to send only once this delivery got a 2xx ("after-200" duplicates).
    public var afterSuccessDelays: [Double]
    /// The faults that shaped this delivery, for the history.
    public var faults: [AppliedFault]
    /// Retry or redelivery number (0 for the first attempt).
    public var attempt: Int
    /// Intended time of the first attempt of this delivery's chain, for its retries and redeliveries: the
    /// App Store's retry schedule counts from it. Nil on a first attempt, whose own ``at`` it is.
    public var firstAttemptAt: Double? = nil

    /// Whether a request is sent (markers only go to the history and the oracle).
    public var sends: Bool { action.delivery.sends }
    /// Whether it is a forged copy.
    public var isForged: Bool { forgery != nil }
    /// The `signedDate` (ms since 1970) the delivery's signed payload carries: the notification's for a
    /// webhook, the transaction's for a device delivery; nil for a report or a marker, which are not signed.
    /// No delivery is due before it (see ``ChaosStream``).
    public var signedDate: Int64? {
        switch action.delivery {
        case .notification(let note): note.signedDate
        case .device(let device): device.transaction.signedDate
        case .report, .marker: nil
        }
    }
}

/// The kinds of copies.
public enum Copy: String, Sendable, Hashable, Codable {
    /// The clean delivery.
    case original
    /// A duplicate sent at the same instant as its original.
    case concurrentDuplicate
    /// A duplicate sent a little later.
    case delayedDuplicate
    /// A duplicate sent after the original got a 2xx.
    case afterSuccessDuplicate
    /// The App Store's retry of an unacknowledged notification (a rejection, a timeout, a reset, a lost
    /// response, a refused connection).
    case retry
    /// The device redelivers an unfinished transaction at its next launch.
    case redelivery
    /// A forged variant.
    case forged
}

/// Network faults Load plays on one request.
public enum NetworkFault: String, Sendable, Hashable, Codable {
    /// Send the request completely, then hang up without reading the answer (the target may have committed).
    case lostResponse
    /// Time the request out on the client side after a short time.
    case timeout
    /// Reset the connection while sending.
    case reset
}

/// One fault applied to a delivery, for the history: its profile name and what it did, in words.
public struct AppliedFault: Sendable, Hashable, Codable {
    /// The profile name of the fault (`duplicate`, `reorder`, `forgery`, `askToBuy`...).
    public var fault: String
    /// What it did, in a short sentence.
    public var detail: String

    /// Creates a record.
    public init(fault: String, detail: String) {
        self.fault = fault
        self.detail = detail
    }
}

/// What happened to one sent delivery, Jepsen-style.
public enum DeliveryOutcome: Sendable, Hashable {
    /// A 2xx: the target acknowledged (for a device: "granted and durable"). `alreadyHad`: the role's
    /// `responses` read the answer as "already had it" (a 409 "already processed", `{"granted": false}`), so the
    /// target says it granted nothing this time.
    case acknowledged(status: Int, alreadyHad: Bool = false)
    /// A definite non-2xx answer.
    case rejected(status: Int)
    /// A non-2xx answer the role's `responses.retryLater` reads as "not now" (a 429 from a device endpoint, by
    /// default): the target did not take it, and did not refuse the purchase either. The device keeps the
    /// transaction unfinished and delivers it again; the App Store keeps its own schedule, so to it (and to the
    /// oracle, for a webhook) it is a refusal like any other.
    case deferred(status: Int)
    /// No answer (timeout, reset, lost response): the target may or may not have committed (`:info`).
    case indeterminate(reason: String)
    /// Never left the harness (missed slot, refused connection): the target did not see it.
    /// `harnessLimited`: the harness itself could not send it in time (a missed slot: it was behind its
    /// schedule or at its in-flight cap), so nothing of the target's is in it and the App Store does not retry it.
    case notSent(reason: String, harnessLimited: Bool = false)

    /// True for a 2xx.
    public var isAcknowledged: Bool { if case .acknowledged = self { true } else { false } }

    /// True for a send the harness missed (see ``notSent(reason:harnessLimited:)``).
    public var isHarnessLimited: Bool { if case .notSent(_, true) = self { true } else { false } }
}

/// A target restart the run must play: run `kill`, wait `downSeconds`, run `start`.
public struct TargetRestartEvent: Sendable, Hashable {
    /// Seconds since the start of the run.
    public var at: Double
    /// Seconds between kill and start.
    public var downSeconds: Double
    /// The kill argument vector.
    public var killCommand: [String]
    /// The start argument vector.
    public var startCommand: [String]
    /// Longest wait for the start command to exit, then for the target to accept connections.
    public var startTimeoutSeconds: Double = 60
    /// The App Store time the outage stands for, as run time from the kill (`outageHours`, compressed); 0 when the
    /// restart declares none.
    public var outageSeconds: Double = 0
}
