import Simulation

/// What a ``MintPipeline`` holds and counts, shared between its producer and the engine's thread under its lock.
struct MintBufferState {
    /// The buffer, oldest first; an entry the engine took whole (``MintPipeline/takeMinted()``) is nil, moved out.
    var ready: [MintedDelivery?] = []
    var head = 0
    /// The intended time of the last entry taken: the lower bound the front gives between batches.
    var takenAt = 0.0
    var finished = false
    var stopped = false
    /// The intended time of the first delivery of the batch being signed.
    var mintingAt: Double?
    /// Since when (uptime ns) the consumer has found the front still being signed.
    var waitingSince: UInt64?
    /// Time the consumer spent waiting for minting, in nanoseconds.
    var waitedNanos: UInt64 = 0
    /// Deliveries shed because they could not be signed in time.
    var shed = 0
    /// Bytes of the signed bodies between the head and the end.
    var bytes = 0
    /// Deliveries between the head and the end, each of a shed run counted (a run is one entry).
    var deliveries = 0
    /// The intended time of the last delivery appended.
    var lastAt = -Double.infinity

    /// Whether the producer sleeps until a take frees room by count or bytes: only then does a take wake it.
    var producerWaiting = false
    /// Times the producer went to sleep on a full buffer.
    var producerWaits = 0

    /// Whether the count or the byte cap is reached: what takes from the front change.
    func isFullByCount(_ limits: MintBufferLimits) -> Bool {
        deliveries >= limits.deliveries || bytes >= limits.bytes
    }

    /// How long (seconds of the run's clock) until the time cap no longer holds, nil when it does not: what the
    /// clock's advance changes. The time cap needs something buffered: an empty buffer is never full by it.
    func overTimeCap(_ limits: MintBufferLimits, now: Double?) -> Double? {
        guard deliveries > 0, let now else { return nil }
        let over = lastAt - now - limits.secondsAhead
        return over >= 0 ? over : nil
    }

    /// After a take: whether it freed room the producer sleeps for, which it is then told of once.
    mutating func roomFreed(_ limits: MintBufferLimits) -> Bool {
        guard producerWaiting, !isFullByCount(limits) else { return false }
        producerWaiting = false
        return true
    }
}

/// How far ahead of the engine a ``MintPipeline`` may sign: the first of its caps reached stops the producer
/// until the engine takes more.
struct MintBufferLimits: Sendable {
    /// Deliveries buffered at most.
    var deliveries = 8192
    /// Bytes of signed bodies buffered at most: a 3-JWS renewal is about 12 KB, a device post about 4 KB, so a
    /// cap by count alone holds several times more memory for one mix than for another.
    var bytes = 32 << 20
    /// Seconds of the schedule buffered at most, past the run's clock (a pipeline without a clock has no such
    /// cap). More than the run's lead, so the first sends never wait; at a high rate the other caps come first.
    var secondsAhead = 2.0
}
