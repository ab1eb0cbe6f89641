internal import AppStoreModel
internal import Foundation
internal import Signing

/// A notification's outer payload and the nested JWS it carries, signed in one pass.
///
/// A genuine notification's payloads are written into one JSON buffer: the nested transaction and renewal
/// info, then the outer payload with a marker where each nested JWS goes. The signer signs the nested payloads
/// and writes the outer JWS straight from those parts (`ES256Signer.sign(_:in:)`), so the outer JSON, which
/// would hold both nested JWS (8 KB, two 4 KB headers), is never assembled, copied or searched.
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
        if forgery == nil {
            var kept: [(field: NestedMarker, jws: String)] = []
            let signer = self.signer
            let signed = try withNesting(&payload, transaction: transaction, renewal: renewal) { layout, json, fields in
                try signer.sign(layout, in: json, nestedJWS: keepNested ? { kept.append((fields[$0], $1)) } : nil)
            }
            if let signed {
                for (field, jws) in kept {
                    switch field {
                    case .transaction: payload.data?.signedTransactionInfo = jws
                    case .renewal: payload.data?.signedRenewalInfo = jws
                    }
                }
                return signed
            }
        }
        return try signOneByOne(&payload, transaction: transaction, renewal: renewal, forgery: forgery)
    }

    /// The webhook body of the notification ``signOuter(_:transaction:renewal:forgery:keepNested:)`` signs,
    /// with the JWS written straight into it (a genuine one is never made a String).
    func outerBody(
        _ payload: inout ResponseBodyV2DecodedPayload,
        transaction: JWSTransactionDecodedPayload?,
        renewal: JWSRenewalInfoDecodedPayload?,
        forgery: Forgery?
    ) throws -> [UInt8] {
        if forgery == nil {
            let signer = self.signer
            let body = try withNesting(&payload, transaction: transaction, renewal: renewal) { layout, json, _ in
                try signer.sign(layout, in: json, between: Self.webhookPrefix, and: Self.webhookSuffix)
            }
            if let body { return body }
        }
        let jws = try signOneByOne(&payload, transaction: transaction, renewal: renewal, forgery: forgery)
        return Self.webhookBody(jws)
    }

    /// The general path: each nested JWS signed on its own and set in `payload`, then the outer payload.
    private func signOneByOne(
        _ payload: inout ResponseBodyV2DecodedPayload,
        transaction: JWSTransactionDecodedPayload?,
        renewal: JWSRenewalInfoDecodedPayload?,
        forgery: Forgery?
    ) throws -> String {
        if let transaction { payload.data?.signedTransactionInfo = try signNested(transaction, forgery: forgery) }
        if let renewal { payload.data?.signedRenewalInfo = try sign(renewal) }
        return try signForged(payload, forgery: forgery) { tampered in
            // A replay that dodges deduplication by notificationUUID.
            tampered.notificationUUID = Self.randomUUID()
        }
    }

    /// Writes the nested payloads and the outer payload, with a marker in each nested field, into one JSON
    /// buffer (on the stack) and lends `body` the layout that cuts it at the markers, and which field each nested
    /// JWS fills. Nil (`body` not called) when there is no `data` to nest into, nothing to nest, or a marker does
    /// not occur exactly once (a payload field that holds the marker's text); the caller then takes the general
    /// path.
    private func withNesting<Result>(
        _ payload: inout ResponseBodyV2DecodedPayload,
        transaction: JWSTransactionDecodedPayload?,
        renewal: JWSRenewalInfoDecodedPayload?,
        _ body: (NestingPayload, UnsafeBufferPointer<UInt8>, [NestedMarker]) throws -> Result
    ) throws -> Result? {
        guard payload.data != nil, transaction != nil || renewal != nil else { return nil }
        return try JSONWriter.withTemporaryStorage(capacity: 4096) { writer -> Result? in
            var nested: (transaction: Range<Int>?, renewal: Range<Int>?) = (nil, nil)
            // Optional chaining writes each payload where it is: `if let` copied it, retaining its Strings.
            if transaction != nil {
                let start = writer.count
                transaction?.writeJSON(to: &writer)
                nested.transaction = start..<writer.count
            }
            if renewal != nil {
                let start = writer.count
                renewal?.writeJSON(to: &writer)
                nested.renewal = start..<writer.count
            }
            // The markers go into the payload for as long as it is written (a copy would retain every field).
            let given = (payload.data?.signedTransactionInfo, payload.data?.signedRenewalInfo)
            if transaction != nil { payload.data?.signedTransactionInfo = NestedMarker.transaction.text }
            if renewal != nil { payload.data?.signedRenewalInfo = NestedMarker.renewal.text }
            let outerStart = writer.count
            payload.writeJSON(to: &writer)
            payload.data?.signedTransactionInfo = given.0
            payload.data?.signedRenewalInfo = given.1
            return try writer.withBytes { json -> Result? in
                guard let (layout, fields) = Self.layout(json, outerFrom: outerStart, nested: nested) else {
                    return nil
                }
                return try body(layout, json, fields)
            }
        }
    }

    /// The layout that cuts the outer JSON (from `outerStart` in `json`) at each nested field's marker, and the
    /// fields in the order they occur; nil when a marker does not occur exactly once.
    private static func layout(
        _ json: UnsafeBufferPointer<UInt8>,
        outerFrom outerStart: Int,
        nested: (transaction: Range<Int>?, renewal: Range<Int>?)
    ) -> (NestingPayload, [NestedMarker])? {
        let outer = UnsafeBufferPointer(rebasing: json[outerStart...])
        var cuts: [(start: Int, field: NestedMarker, range: Range<Int>)] = []
        cuts.reserveCapacity(2)
        for (field, range) in [(NestedMarker.transaction, nested.transaction), (.renewal, nested.renewal)] {
            guard let range else { continue }
            guard let start = field.onlyOccurrence(in: outer) else { return nil }
            cuts.append((outerStart + start, field, range))
        }
        if cuts.count == 2 && cuts[1].start < cuts[0].start { cuts.swapAt(0, 1) }
        var payload = NestingPayload(pieces: [], nested: [])
        var fields: [NestedMarker] = []
        payload.pieces.reserveCapacity(cuts.count + 1)
        payload.nested.reserveCapacity(cuts.count)
        fields.reserveCapacity(cuts.count)
        var pieceStart = outerStart
        for cut in cuts {
            payload.pieces.append(pieceStart..<cut.start)
            payload.nested.append(cut.range)
            fields.append(cut.field)
            pieceStart = cut.start + cut.field.bytes.count
        }
        payload.pieces.append(pieceStart..<json.count)
        return (payload, fields)
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
    func onlyOccurrence(in text: UnsafeBufferPointer<UInt8>) -> Int? {
        let marker = bytes
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
