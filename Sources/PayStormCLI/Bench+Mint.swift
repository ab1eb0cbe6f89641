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
    /// Measures minting, phase by phase, on one thread and on `threads`.
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
        let pipelineStep = try signingPipelineStep()
        let minter = self.minter
        let kind = self.kind
        let minterStep: @Sendable () throws -> () throws -> Int = {
            {
                _ = try minter.notification(kind)
                return 1
            }
        }
        let runStep = runMintStep()
        let phases = [("raw", rawStep), ("pipeline", pipelineStep), ("minter", minterStep), ("run", runStep)]
        if try measureOnly(phases, benchmark: "mint") { return }
        let single = try interleaved(threads: 1, phases.map(\.1))
        let multi = try interleaved(threads: threads, phases.map(\.1))
        printMintRates(single: single, multi: multi)
        print("RSS at end: \(residentMegabytes())")
    }

    /// One notification through the signing pipeline alone, as a run's minting signs it into its webhook body:
    /// the payloads of Minter's sizes, pre-encoded in one buffer with the outer JSON cut where the nested JWS go,
    /// so that only signing work is measured. Prints the payloads' sizes.
    private func signingPipelineStep() throws -> @Sendable () throws -> () throws -> Int {
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
        return {
            {
                // Signed straight into the webhook body, as a run signs each notification.
                _ = try json.withUnsafeBufferPointer { try signer.sign(layout, in: $0, between: prefix, and: suffix) }
                return 1
            }
        }
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

    /// The mint phases' rates: raw signs, the signing pipeline and the full Minter, on one thread and on all.
    private func printMintRates(single: [BenchRate], multi: [BenchRate]) {
        let (raw1, pipeline1, minter1, run1) = (single[0], single[1], single[2], single[3])
        let (rawN, pipelineN, minterN, runN) = (multi[0], multi[1], multi[2], multi[3])
        print("rates: wall-clock ops/s, and ops per CPU-second of the measuring threads (as 'openssl speed' counts);")
        print("each phase interleaves 0.25 s slices with the others so that outside load hits all alike")
        print("raw ES256 sign (EVP_PKEY_sign, one context, 32-byte digest, no allocation):")
        printRawRate(1, raw1, unit: "signs")
        printRawRate(threads, rawN, unit: "signs")
        print("notifications (outer + nested transaction + renewal info = 3 ES256 signatures):")
        print("  signing pipeline, pre-encoded payloads:")
        printNotificationRate(1, pipeline1, raw1)
        printNotificationRate(threads, pipelineN, rawN)
        print("  full Minter (payload building + JSON encoding + signing, Minter.notification: three Strings):")
        printNotificationRate(1, minter1, raw1)
        printNotificationRate(threads, minterN, rawN)
        print("  as a run mints (payloads built, Minter.notificationBody straight into the webhook body):")
        printNotificationRate(1, run1, raw1)
        printNotificationRate(threads, runN, rawN)
        for (name, rate, goal) in [("pipeline", pipeline1, 0.9), ("full Minter", minter1, 0.8)] {
            let ratio = rate.perCPUSecond * 3 / raw1.perCPUSecond
            print(
                "target (1-thread \(name) notifications x 3 >= \(goal) x raw signs, per CPU-second): "
                    + "\(String(format: "%.2f", ratio)) -> \(ratio >= goal ? "met" : "NOT met")"
            )
        }
        print(
            "scaling 1 -> \(threads) threads (wall clock): pipeline x\(String(format: "%.2f", pipelineN.wall / pipeline1.wall)), "
                + "raw x\(String(format: "%.2f", rawN.wall / raw1.wall))"
        )
    }
}
