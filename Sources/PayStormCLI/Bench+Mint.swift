import AppStoreModel
import Dispatch
import Foundation
import Minting
import PayStorm
import RunControl
import Signing
import Synchronization

/// `paystorm bench mint`: ES256 signing raw, through the signing pipeline, through the Minter, and as a run mints.
extension Bench {
    /// Measures minting, phase by phase, on one thread and on `threads`, beside the floor the format sets.
    func mint() throws {
        header("mint")
        let key = pki.leafKey
        let rawStep: @Sendable () throws -> () throws -> Int = {
            let raw = try RawES256(key: key)
            return {
                try raw.sign(times: 16)
                return 16
            }
        }
        if opensslSpeed { printOpenSSLSpeed() }
        let (pipelineStep, signed) = try signingPipelineStep()
        let floor = try mintFloor(signed)
        let minter = self.minter
        let kind = self.kind
        let minterStep: @Sendable () throws -> () throws -> Int = {
            {
                _ = try minter.notification(kind)
                return 1
            }
        }
        let phases = [
            ("raw", rawStep), ("floor", MintFloor.step(key: key, parts: floor.signingInputs)),
            ("floor-kept", MintFloor.step(key: key, parts: floor.varyingParts)), ("pipeline", pipelineStep),
            ("minter", minterStep), ("run", runMintStep()),
        ]
        if try measureOnly(phases, benchmark: "mint") { return }
        let single = try interleaved(threads: 1, phases.map(\.1))
        let multi = try interleaved(threads: threads, phases.map(\.1))
        printMintRates(single: single, multi: multi, floor: floor)
        print("RSS at end: \(residentMegabytes())")
    }

    /// The floor of the notification the pipeline signs, with four more of its kind (other identifiers and
    /// dates) showing which prefixes of its signing inputs repeat.
    private func mintFloor(_ signed: String) throws -> MintFloor {
        let date = Minter.nowMilliseconds()
        let others = try (1...4).map {
            try minter.notification(kind, signedDate: date + Int64($0) * (Minter.dayMilliseconds + 1)).signedPayload
        }
        return try MintFloor(signed, others: others)
    }

    /// One notification through the signing pipeline alone, as a run's minting signs it into its webhook body:
    /// the payloads of Minter's sizes, pre-encoded in one buffer with the outer JSON cut where the nested JWS go,
    /// so that only signing work is measured. Prints the payloads' sizes; returns the step and one outer JWS it
    /// signs.
    private func signingPipelineStep() throws -> (@Sendable () throws -> () throws -> Int, String) {
        let sample = try minter.notification(kind)
        let encoder = AppStoreJSON.encoder()
        guard let transaction = sample.transaction, let renewal = sample.renewalInfo else {
            throw CLIError(.internalError, "the sample notification has no nested transaction or renewal info")
        }
        let transactionBytes = Array(try encoder.encode(transaction))
        let renewalBytes = Array(try encoder.encode(renewal))
        var outer = sample.payload
        outer.data?.signedTransactionInfo = "@@TRANSACTION@@"
        outer.data?.signedRenewalInfo = "@@RENEWAL@@"
        let template = Array(try encoder.encode(outer))
        let json = transactionBytes + renewalBytes + template
        let start = transactionBytes.count + renewalBytes.count
        let markers = [
            (Array("@@TRANSACTION@@".utf8), 0..<transactionBytes.count),
            (Array("@@RENEWAL@@".utf8), transactionBytes.count..<start),
        ]
        var cuts: [(at: Range<Int>, nested: Range<Int>)] = []
        for (marker, nested) in markers {
            guard let found = json[start...].firstRange(of: marker) else {
                throw CLIError(.internalError, "cannot find \(marker) in the notification template")
            }
            cuts.append((found, nested))
        }
        cuts.sort { $0.at.lowerBound < $1.at.lowerBound }
        let layout = NestingPayload(
            pieces: [start..<cuts[0].at.lowerBound, cuts[0].at.upperBound..<cuts[1].at.lowerBound]
                + [cuts[1].at.upperBound..<json.count],
            nested: cuts.map(\.nested)
        )
        let signer = ES256Signer(pki: pki)
        let jws = try json.withUnsafeBufferPointer { try signer.sign(layout, in: $0) }
        let outerBytes = JWS.base64URLDecode(String(jws.split(separator: ".")[1]))?.count ?? 0
        print("payloads: transaction \(transactionBytes.count) B, renewal info \(renewalBytes.count) B,")
        print(
            "  outer payload \(outerBytes) B (with both nested JWS), webhook body \(Minter.webhookBody(jws).count) B"
        )
        let (prefix, suffix) = (Array("{\"signedPayload\":\"".utf8), Array("\"}".utf8))
        let step: @Sendable () throws -> () throws -> Int = {
            {
                // Signed straight into the webhook body, as a run signs each notification.
                _ = try json.withUnsafeBufferPointer { try signer.sign(layout, in: $0, between: prefix, and: suffix) }
                return 1
            }
        }
        return (step, jws)
    }

    /// One notification as a run mints it: its payloads built (a fresh transaction), then signed straight into
    /// the webhook body by `Minter.notificationBody`, with no String made.
    private func runMintStep() -> @Sendable () throws -> () throws -> Int {
        let (minter, kind) = (self.minter, self.kind)
        return {
            {
                let date = Minter.nowMilliseconds()
                let facts = Minter.impliedTransaction(by: kind, signedDate: date)
                let payload = ResponseBodyV2DecodedPayload(
                    notificationType: kind.notificationType,
                    subtype: kind.subtype,
                    notificationUUID: Minter.randomUUID(),
                    data: NotificationData(
                        appAppleId: minter.app.appAppleId,
                        bundleId: minter.app.bundleId,
                        bundleVersion: minter.app.bundleVersion,
                        environment: minter.app.environment,
                        status: Minter.status(for: kind)
                    ),
                    version: "2.0",
                    signedDate: date
                )
                _ = try minter.notificationBody(
                    payload,
                    transaction: minter.transactionPayload(facts, kind: kind, signedDate: date),
                    renewal: minter.renewalInfoPayload(facts, kind: kind, signedDate: date)
                )
                return 1
            }
        }
    }

    /// The mint phases' rates: raw signs, the floors, the signing pipeline and the full Minter, on one thread
    /// and on all, then each form's share of the floors.
    private func printMintRates(single: [BenchRate], multi: [BenchRate], floor: MintFloor) {
        print("rates: wall-clock ops/s, and ops per CPU-second of the measuring threads (as 'openssl speed' counts);")
        print("each phase interleaves 0.25 s slices with the others so that outside load hits all alike")
        print("raw ES256 sign (EVP_PKEY_sign, one context, 32-byte digest, no allocation):")
        printRawRate(1, single[0], unit: "signs")
        printRawRate(threads, multi[0], unit: "signs")
        let signs = floor.signingInputs.count
        print("notifications (outer + nested transaction + renewal info = \(signs) ES256 signatures):")
        let sizes = { (parts: [[UInt8]]) in parts.map { bytes($0.count) }.joined(separator: " + ") }
        let forms = [
            "  the floor the format sets: \(signs) raw signs over precomputed digests + SHA-256 of each JWS's\n"
                + "  signing input whole, \(bytes(floor.hashedBytes)) (\(sizes(floor.signingInputs))):",
            "  the floor with what repeats from one notification to the next kept (its digest state reused):\n"
                + "  \(signs) raw signs + SHA-256 of \(bytes(floor.varyingBytes)) (\(sizes(floor.varyingParts))):",
            "  signing pipeline, pre-encoded payloads:",
            "  full Minter (payload building + JSON encoding + signing, Minter.notification: three Strings):",
            "  as a run mints (payloads built, Minter.notificationBody straight into the webhook body):",
        ]
        for (index, form) in forms.enumerated() {
            print(form)
            printNotificationRate(1, single[index + 1], single[0])
            printNotificationRate(threads, multi[index + 1], multi[0])
        }
        printFloorShares(single: single, multi: multi)
        print(
            "scaling 1 -> \(threads) threads (wall clock): pipeline x\(String(format: "%.2f", multi[3].wall / single[3].wall)), "
                + "raw x\(String(format: "%.2f", multi[0].wall / single[0].wall))"
        )
    }

    /// Each form's notifications per CPU-second as a share of each floor's (phases 1 and 2), beside the goals.
    private func printFloorShares(single: [BenchRate], multi: [BenchRate]) {
        print("shares of the floor, notifications per CPU-second (form / floor), on 1 thread and on \(threads):")
        print("                      whole inputs    what repeats kept   goal")
        for (name, form, goal) in [("signing pipeline", 3, 0.95), ("full Minter", 4, 0.85), ("as a run mints", 5, 0)] {
            let shares = [1, 2].map { floor in
                (
                    single[form].perCPUSecond / single[floor].perCPUSecond,
                    multi[form].perCPUSecond / multi[floor].perCPUSecond
                )
            }
            let columns = shares.map { String(format: "%.2f / %.2f", $0.0, $0.1) }
            let verdict =
                goal == 0
                ? "-"
                : String(format: ">= %.2f: whole ", goal) + (shares[0].0 >= goal ? "met" : "NOT met") + ", kept "
                    + (shares[1].0 >= goal ? "met" : "NOT met")
            print(
                "  \(name.padding(toLength: 18, withPad: " ", startingAt: 0))  \(columns[0])     \(columns[1])         \(verdict)"
            )
        }
    }
}

/// A byte count with thousands separators: `29,354 B`.
private func bytes(_ count: Int) -> String {
    var text = String(count)
    var index = text.count - 3
    while index > 0 {
        text.insert(",", at: text.index(text.startIndex, offsetBy: index))
        index -= 3
    }
    return text + " B"
}
