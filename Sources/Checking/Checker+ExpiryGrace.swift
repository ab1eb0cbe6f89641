import Simulation

/// A fixed real-time buffer a backend declares it keeps past each expiry (`target.probe.expiryGraceSeconds`):
/// a subscription that ran out by time is no wrong state while the target still entitles it within the buffer.
/// A refunded or revoked one gets none: a refund ends access at once.
extension Checker {
    /// Where a probe falls against the declared buffer past a subscription's end.
    enum GraceReading {
        /// Past it, or no buffer applies: an entitlement is judged as without one.
        case outside
        /// Within it: an entitlement is allowed.
        case within
        /// Near its end, where the target's clock and the run's may read either way: a later probe decides.
        case nearItsEnd(String)
    }

    /// How the declared buffer reads an entitlement of `sub`, which the App Store says ended.
    func expiryGrace(of sub: SubscriptionSeries, _ context: Context) -> GraceReading {
        guard expiryGrace > 0, sub.status != .revoked else { return .outside }
        let graceEnd = sub.end + expiryGrace
        if abs(context.now - graceEnd) < context.boundary {
            return .nearItsEnd(
                "the declared buffer past the expiry of transaction \(sub.transactionId) ends within \(context.boundary) ms"
            )
        }
        return context.now < graceEnd ? .within : .outside
    }
}
