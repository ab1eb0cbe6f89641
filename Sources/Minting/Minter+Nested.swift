internal import AppStoreModel
internal import Foundation
internal import Signing

/// A notification's outer payload and the nested JWS it carries, signed in one buffer.
///
/// A genuine notification's nested transaction and renewal info are signed straight into the outer
/// payload's bytes, where the JSON writer would otherwise copy them from strings (and scan their 8 KB for
/// characters to escape, which base64url never has), and the outer signature is told where they start,
/// so it need not search for them.
extension Minter {
    /// Signs a notification's outer payload after its nested transaction and renewal info: genuinely, or as
    /// `forgery` says (forged minting keeps the general path, one object at a time).
    /// - Parameters:
    ///   - payload: the outer payload; its `data` receives the nested JWS when `keepNested` (or when forged).
    ///   - transaction: the nested transaction, if the notification carries one.
    ///   - renewal: the nested renewal info, if it carries one.
    ///   - forgery: a forged variant, or nil.
    ///   - keepNested: whether the caller reads the nested JWS from `payload` afterwards.
    /// - Returns: the outer JWS.
    func signOuter(
        _ payload: inout ResponseBodyV2DecodedPayload,
        transaction: JWSTransactionDecodedPayload?,
        renewal: JWSRenewalInfoDecodedPayload?,
        forgery: Forgery?,
        keepNested: Bool
    ) throws -> String {
        var jws: [UInt8] = []
        try appendOuter(
            &payload,
            transaction: transaction,
            renewal: renewal,
            forgery: forgery,
            keepNested: keepNested,
            to: &jws
        )
        return String(decoding: jws, as: UTF8.self)
    }

    /// ``signOuter(_:transaction:renewal:forgery:keepNested:)`` appending the JWS's bytes to `output`, so that
    /// a caller building a request body need not turn it into a String and back.
    func appendOuter(
        _ payload: inout ResponseBodyV2DecodedPayload,
        transaction: JWSTransactionDecodedPayload?,
        renewal: JWSRenewalInfoDecodedPayload?,
        forgery: Forgery?,
        keepNested: Bool,
        to output: inout [UInt8]
    ) throws {
        if forgery == nil, payload.data != nil, transaction != nil || renewal != nil,
            try signInPlace(&payload, transaction: transaction, renewal: renewal, keepNested: keepNested, to: &output)
        {
            return
        }
        if let transaction { payload.data?.signedTransactionInfo = try signNested(transaction, forgery: forgery) }
        if let renewal { payload.data?.signedRenewalInfo = try sign(renewal) }
        let jws = try signForged(payload, forgery: forgery) { tampered in
            // A replay that dodges deduplication by notificationUUID.
            tampered.notificationUUID = Self.randomUUID()
        }
        output.append(contentsOf: jws.utf8)
    }

    /// The outer payload is written with a marker in each nested field, and each marker is replaced by
    /// the nested JWS signed in place; the outer JWS is appended to `output`. False (nothing appended) when a
    /// marker is not found exactly once (a payload field that holds the marker's text); the caller then takes
    /// the general path.
    private func signInPlace(
        _ payload: inout ResponseBodyV2DecodedPayload,
        transaction: JWSTransactionDecodedPayload?,
        renewal: JWSRenewalInfoDecodedPayload?,
        keepNested: Bool,
        to output: inout [UInt8]
    ) throws -> Bool {
        var template = payload
        var nested: [(field: NestedMarker, payload: [UInt8])] = []
        if let transaction {
            template.data?.signedTransactionInfo = NestedMarker.transaction.text
            nested.append((.transaction, AppStoreJSON.encode(transaction)))
        }
        if let renewal {
            template.data?.signedRenewalInfo = NestedMarker.renewal.text
            nested.append((.renewal, AppStoreJSON.encode(renewal)))
        }
        let text = AppStoreJSON.encode(template)
        var cuts: [(start: Int, end: Int, field: NestedMarker, payload: [UInt8])] = []
        for (field, bytes) in nested {
            guard let start = field.onlyOccurrence(in: text) else { return false }
            cuts.append((start, start + field.bytes.count, field, bytes))
        }
        cuts.sort { $0.start < $1.start }

        var outer: [UInt8] = []
        outer.reserveCapacity(text.count + cuts.reduce(0) { $0 + $1.payload.count * 4 / 3 + 4096 })
        var offsets: [Int] = []
        var copied = 0
        for cut in cuts {
            outer.append(contentsOf: text[copied..<cut.start])
            let start = outer.count
            offsets.append(start)
            try signer.append(payload: cut.payload, nestedAt: [], to: &outer)
            if keepNested {
                let signed = String(decoding: outer[start...], as: UTF8.self)
                switch cut.field {
                case .transaction: payload.data?.signedTransactionInfo = signed
                case .renewal: payload.data?.signedRenewalInfo = signed
                }
            }
            copied = cut.end
        }
        outer.append(contentsOf: text[copied...])
        try signer.append(payload: outer, nestedAt: offsets, to: &output)
        return true
    }
}

/// A placeholder for a nested JWS in an outer payload's JSON. DEL (0x7F) passes the JSON writer
/// unescaped and never occurs in what minting writes, so the text is found where the field is.
enum NestedMarker {
    case transaction, renewal

    var text: String {
        switch self {
        case .transaction: "\u{7F}paystorm:signedTransactionInfo\u{7F}"
        case .renewal: "\u{7F}paystorm:signedRenewalInfo\u{7F}"
        }
    }

    var bytes: [UInt8] {
        switch self {
        case .transaction: Self.transactionBytes
        case .renewal: Self.renewalBytes
        }
    }

    private static let transactionBytes = Array(NestedMarker.transaction.text.utf8)
    private static let renewalBytes = Array(NestedMarker.renewal.text.utf8)

    /// Where the marker starts in `json`, when it occurs there exactly once.
    func onlyOccurrence(in json: [UInt8]) -> Int? {
        let marker = bytes
        return json.withUnsafeBufferPointer { text -> Int? in
            guard let base = text.baseAddress else { return nil }
            var found: Int?
            var index = 0
            // memchr for the rare DEL byte: a generic search over the slice cost 1% of minting a notification.
            while index < text.count, let hit = memchr(base + index, 0x7F, text.count - index) {
                let start = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if text.count - start >= marker.count, memcmp(base + start, marker, marker.count) == 0 {
                    guard found == nil else { return nil }
                    found = start
                    index = start + marker.count
                } else {
                    index = start + 1
                }
            }
            return found
        }
    }
}
