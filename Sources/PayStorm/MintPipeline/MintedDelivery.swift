import Chaos

/// One delivery ready to send: the plan and its signed body (nil for a marker).
struct MintedDelivery: Sendable {
    var planned: PlannedDelivery
    var body: [UInt8]?
    /// Set when minting failed; the delivery is then recorded, never sent.
    var failure: String?
    /// Set when the pipeline shed the delivery instead of signing it: its intended time had passed by more
    /// than the pipeline's shedding horizon. It is PayStorm's miss, recorded, never sent.
    var shed: String? = nil
    /// For a shed entry of the pipeline's buffer, the consecutive deliveries shed with it, `planned` first: a
    /// run is one buffer entry and is handed on whole, so shedding costs nothing per delivery past the world.
    var shedRun: ArraySlice<PlannedDelivery> = []
}

/// What the engine's thread finds at the front of the pipeline, without waiting.
enum MintHead {
    /// The next delivery, minted (or shed).
    case ready(MintedDelivery)
    /// The next delivery, due at `at` (seconds into the run), is still being signed.
    case minting(at: Double)
    /// Nothing more will come.
    case end
}
