import AppStoreModel
import Chaos
import Simulation

/// What the phrase of a delivery's history entry depends on, for the deliveries most runs are made of (no fault
/// and no forgery): the oracle looks the phrase up by it instead of writing the same sentence again for every
/// delivery it books.
struct PhraseKey: Hashable, Sendable {
    enum Shape: Hashable, Sendable {
        case notification(NotificationTypeV2, Subtype?)
        case device(Int, DeviceSource)
        case report(String, String)
        case marker(Lifecycle)
    }

    var shape: Shape
    var copy: Copy
    /// The answer, for an answer's phrase; nil for the dispatch's.
    var outcome: DeliveryOutcome?

    /// The key of a delivery's dispatch (`outcome` nil) or of its answer; nil when the phrase names a fault, a
    /// forgery or an answer's free-form reason, which are made each time. A function rather than an initializer,
    /// which would take its own copy of the delivery.
    static func of(_ delivery: PlannedDelivery, outcome: DeliveryOutcome? = nil) -> PhraseKey? {
        guard delivery.faults.isEmpty, delivery.forgery == nil else { return nil }
        switch outcome {
        case .indeterminate?, .notSent?: return nil
        case .acknowledged?, .rejected?, .deferred?, nil: break
        }
        let shape: Shape
        switch delivery.action.delivery {
        case .notification(let note): shape = .notification(note.notificationType, note.payload.subtype)
        case .device(let device): shape = .device(device.device, device.source)
        case .report(let report): shape = .report(report.purchaseResult, report.productId)
        case .marker: shape = .marker(delivery.action.lifecycle)
        }
        return PhraseKey(shape: shape, copy: delivery.copy, outcome: outcome)
    }
}

/// A phrase made once, and its index in the phrase table once it was interned.
struct CachedPhrase: Sendable {
    var text: String
    var index: UInt32?
}

extension OracleState {
    /// Most phrases kept by key: the keys of a run are few (kinds of delivery by answer), so this bounds a
    /// profile with unusually many, not a normal one.
    static let phraseCacheLimit = 4096

    /// The phrase of `key` when it was made and, if `interned`, interned before: what
    /// `phrase(_:interned:make:)` returns then, looked up without a closure to make it (whose context would
    /// copy what it captures).
    func cachedPhrase(_ key: PhraseKey?, interned: Bool) -> (text: String, index: UInt32?)? {
        guard let key, let cached = phraseCache[key], !interned || cached.index != nil else { return nil }
        return (cached.text, interned ? cached.index : nil)
    }

    /// The phrase of `key`, made by `make` the first time, and its index in the phrase table when `interned`:
    /// the same text and index as interning `make()` each time would give.
    mutating func phrase(
        _ key: PhraseKey?,
        interned: Bool,
        make: () -> String
    ) -> (text: String, index: UInt32?) {
        guard let key else {
            let text = make()
            return (text, interned ? intern(text) : nil)
        }
        if let cached = phraseCache[key], !interned || cached.index != nil {
            return (cached.text, interned ? cached.index : nil)
        }
        let stored = phraseCache[key]
        var phrase = stored ?? CachedPhrase(text: make())
        if interned { phrase.index = intern(phrase.text) }
        if stored != nil || phraseCache.count < Self.phraseCacheLimit { phraseCache[key] = phrase }
        return (phrase.text, phrase.index)
    }
}
