import Chaos
import Dispatch
import Foundation
import Profile
public import RunControl
import Signing
import Simulation

/// How fast a run's mint pipeline signs the profile's own deliveries with nothing else to do: the ceiling a
/// run's sending rate is judged against (`paystorm bench ceiling`).
public struct MintCeiling: Sendable {
    /// Deliveries signed (those that send a signed body; markers and reports are left out).
    public var deliveries: Int
    /// Signatures in those deliveries: a webhook with a transaction and renewal info carries three.
    public var signatures: Int
    /// Seconds measured.
    public var seconds: Double
    /// Cores the pipeline signs on (as a run's does: all of them).
    public var cores: Int
    /// Signed deliveries the whole schedule intends (counted without signing).
    public var intendedDeliveries: Int
    /// The schedule's length in seconds.
    public var scheduleSeconds: Double
    /// The process's CPU time (user and system, every thread) while measuring: what minting costs, whatever else
    /// the machine runs meanwhile.
    public var cpuSeconds: Double

    /// Signed deliveries per second.
    public var deliveriesPerSecond: Double { seconds > 0 ? Double(deliveries) / seconds : 0 }
    /// Signatures per second.
    public var signaturesPerSecond: Double { seconds > 0 ? Double(signatures) / seconds : 0 }
    /// Signed deliveries per second that the schedule intends, on average.
    public var intendedPerSecond: Double { scheduleSeconds > 0 ? Double(intendedDeliveries) / scheduleSeconds : 0 }
    /// CPU seconds per signed delivery (the world, chaos and signing): on a busy machine the rate falls, this
    /// does not.
    public var cpuPerDelivery: Double { deliveries > 0 ? cpuSeconds / Double(deliveries) : 0 }
}

extension PayStormRun {
    /// Measures the minting ceiling of a profile: the run's world, chaos and full `Minter` behind the run's
    /// mint pipeline on every core, drained as fast as it signs, so the rate is weighted by the profile's own
    /// mix of deliveries and signatures. Nothing is sent and no target is needed: bodies use contract v1.
    /// - Parameters:
    ///   - options: the profile, seed and rate scale (a scaled schedule gives a longer stream).
    ///   - seconds: how long to measure at most; a stream that ends sooner is measured to its end.
    /// - Returns: what was signed and in how long.
    /// - Throws: `RunError` for a bad profile or a PKI that cannot be generated.
    public static func mintCeiling(_ options: RunOptions, seconds: Double) throws(RunError) -> MintCeiling {
        let (profile, _) = try load(options)
        let pki: TestPKI
        do {
            pki = try TestPKI.generate()
        } catch {
            throw .internalError("cannot generate a test PKI: \(error)")
        }
        let bodies = DeliveryBodies(minter: minter(profile: profile, pki: pki))
        let world = World(profile: profile, startMillis: Int64(Date().timeIntervalSince1970 * 1000))
        let cache = BodyCache()
        let pipeline = MintPipeline(stream: ChaosStream(world, profile: profile), bodies: bodies, cache: cache)
        let start = DispatchTime.now().uptimeNanoseconds
        let cpuStart = HarnessSaturation.processCPUSeconds()
        let limit = UInt64(seconds * 1e9)
        pipeline.start()
        var deliveries = 0
        var signatures = 0
        var elapsed: UInt64 = 0
        while elapsed < limit, let minted = pipeline.peek() {
            pipeline.pop()
            // Nothing resends: a body is dropped as soon as it is counted, so memory stays flat.
            cache.forget(minted.planned.id)
            elapsed = DispatchTime.now().uptimeNanoseconds - start
            let count = signatureCount(of: minted.planned)
            guard minted.body != nil, count > 0 else { continue }
            deliveries += 1
            signatures += count
        }
        pipeline.stopAndWait()
        let cpuSeconds = HarnessSaturation.processCPUSeconds() - cpuStart
        return MintCeiling(
            deliveries: deliveries,
            signatures: signatures,
            seconds: Double(elapsed) / 1e9,
            cores: ProcessInfo.processInfo.activeProcessorCount,
            intendedDeliveries: ChaosStream(world, profile: profile).reduce(0) {
                $0 + (signatureCount(of: $1) > 0 ? 1 : 0)
            },
            scheduleSeconds: profile.durationSeconds,
            cpuSeconds: cpuSeconds
        )
    }

    /// ES256 signatures in a delivery's body: a device delivery one, a notification one plus its nested
    /// transaction and renewal info.
    static func signatureCount(of delivery: PlannedDelivery) -> Int {
        switch delivery.action.delivery {
        case .marker, .report: 0
        case .device: 1
        case .notification(let facts): 1 + (facts.transaction == nil ? 0 : 1) + (facts.renewal == nil ? 0 : 1)
        }
    }
}
