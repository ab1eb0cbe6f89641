internal import AppStoreModel
import Chaos
import Load
import Primitives
import Simulation

/// What names a delivery in its `send` and `result` lines (`role` to `attempt`, then `notificationType` to
/// `network`), rendered once with its `dispatch` line and kept with the request until its answer, so that the
/// answer's two lines copy these bytes instead of reading the delivery again. Empty when the run keeps no history.
struct HistoryIdentity {
    var bytes: [UInt8] = []
}

/// The history's text as it is written: a value, so that writing a line is one access to the log's buffer
/// instead of one a field (the log is a class, whose stored properties are checked at each access).
struct HistoryText {
    var bytes: [UInt8] = []

    /// Appends a line's opening: `{"t":...,"event":"..."`.
    mutating func open(event: String, at t: Double) {
        put("{\"t\":")
        HistoryLog.appendFixed(t, places: 6, to: &bytes)
        put(",\"event\":\"")
        put(utf8: event)
        put("\"")
    }

    /// Appends a delivery's line whose identity is rendered here (every event but an answer's `send` and
    /// `result` after a `dispatch`).
    mutating func putDelivery(
        _ delivery: PlannedDelivery,
        kind: String?,
        writesFaults: Bool,
        startMillis: Int64
    ) {
        putIdentityHead(delivery)
        if let kind { put(",\"kind\":\"", string: kind) }
        putIdentityTail(delivery, startMillis: startMillis)
        if writesFaults && !delivery.faults.isEmpty { putFaults(delivery.faults) }
    }

    /// Appends a `dispatch` line's fields after its opening, and returns the identity its answer's lines reuse.
    mutating func putDispatch(_ delivery: PlannedDelivery, kind: String, startMillis: Int64) -> HistoryIdentity {
        let head = bytes.count
        putIdentityHead(delivery)
        let headEnd = bytes.count
        put(",\"kind\":\"", string: kind)
        let tail = bytes.count
        putIdentityTail(delivery, startMillis: startMillis)
        var identity = HistoryIdentity()
        identity.bytes.reserveCapacity(headEnd - head + bytes.count - tail)
        bytes.withUnsafeBufferPointer { written in
            identity.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: written[head..<headEnd]))
            identity.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: written[tail...]))
        }
        if !delivery.faults.isEmpty { putFaults(delivery.faults) }
        return identity
    }

    /// Appends `role`, `delivery`, `account`, `lifecycle`, `copy` and `attempt`.
    private mutating func putIdentityHead(_ delivery: PlannedDelivery) {
        put(",\"role\":\"")
        put(utf8: HistoryLog.role(of: delivery))
        put("\",\"delivery\":")
        HistoryLog.appendDecimal(UInt64(delivery.id), to: &bytes)
        put(",\"account\":\"")
        put(utf8: delivery.action.appAccountToken)
        put("\",\"lifecycle\":\"")
        put(utf8: delivery.action.lifecycle.rawValue)
        put("\",\"copy\":\"")
        put(utf8: delivery.copy.rawValue)
        put("\",\"attempt\":")
        HistoryLog.appendDecimal(UInt64(delivery.attempt), to: &bytes)
    }

    /// Appends `notificationType`, `subtype`, `transactionId`, `originalTransactionId`, `signedAt`, `forgery` and
    /// `network`, those a delivery has.
    private mutating func putIdentityTail(_ delivery: PlannedDelivery, startMillis: Int64) {
        // Stored fields only, all read before anything is written, so that the optimizer reads these few fields
        // out of the payload's box instead of copying the whole payload (each computed getter is a call that, for
        // all it knows, could change the box).
        var type: String?
        var subtype: String?
        var original: String?
        var signed: Int64?
        switch delivery.action.delivery {
        case .notification(let facts):
            type = facts.payload.notificationType?.rawValue
            subtype = facts.payload.subtype?.rawValue
            original = facts.transaction?.payload.originalTransactionId
            signed = facts.payload.signedDate
        case .device(let device):
            original = device.transaction.payload.originalTransactionId
            signed = device.transaction.payload.signedDate
        case .report, .marker:
            break
        }
        if let type { put(",\"notificationType\":\"", escaping: type) }
        if let subtype { put(",\"subtype\":\"", escaping: subtype) }
        if let id = delivery.action.truth.transactionId { put(",\"transactionId\":\"", string: id) }
        if let original { put(",\"originalTransactionId\":\"", string: original) }
        if let signed {
            put(",\"signedAt\":")
            HistoryLog.appendFixed(Double(signed - startMillis) / 1000, places: 3, to: &bytes)
        }
        if let forgery = delivery.forgery { put(",\"forgery\":\"", string: forgery) }
        if let network = delivery.network { put(",\"network\":\"", string: network.rawValue) }
    }

    /// Appends `"faults":[...]`, the names of the faults that shaped a delivery.
    private mutating func putFaults(_ faults: [AppliedFault]) {
        put(",\"faults\":[")
        for (index, fault) in faults.enumerated() {
            put(index == 0 ? "\"" : ",\"")
            JSONEscaping.append(fault.fault, to: &bytes)
            put("\"")
        }
        put("]")
    }

    /// Appends what a result says: `sent`, `status`, `latencyMicros`, `error`, `resent` and `detail`.
    mutating func putOutcome(result: LoadResult?, sent: Bool?, detail: String?) {
        if sent == true {
            put(",\"sent\":true")
        } else if sent == false {
            put(",\"sent\":false")
        }
        if let result {
            put(",\"status\":")
            put(signed: Int64(result.status))
            put(",\"latencyMicros\":")
            put(signed: result.latency.microseconds)
            if let error = result.error { put(",\"error\":\"", string: error.rawValue) }
            if result.resent { put(",\"resent\":true") }
        }
        // A failure's own words (libcurl's and the system's) unless the caller gives a detail: the class alone
        // cannot tell a refused retry from a refused first attempt when a witness is read later.
        if let detail = detail ?? result.flatMap({ $0.error != nil && !$0.detail.isEmpty ? $0.detail : nil }) {
            put(",\"detail\":\"", escaping: detail)
        }
    }

    /// Appends a string field: `opening` (`,"name":"`), then `value` (JSON-safe already), then the closing quote.
    mutating func put(_ opening: StaticString, string value: String) {
        put(opening)
        put(utf8: value)
        put("\"")
    }

    /// Appends a string field whose value may need escaping.
    mutating func put(_ opening: StaticString, escaping value: String) {
        put(opening)
        JSONEscaping.append(value, to: &bytes)
        put("\"")
    }

    /// Appends `value` in decimal, with its sign.
    private mutating func put(signed value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        HistoryLog.appendDecimal(value.magnitude, to: &bytes)
    }

    mutating func put(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends `text`'s UTF-8 from its storage at once, not byte by byte through its view.
    mutating func put(utf8 text: String) {
        JSONEscaping.withUTF8(text) { bytes.append(contentsOf: $0) }
    }
}
