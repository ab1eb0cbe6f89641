public import Primitives

/// A profile's `schedule` segment, decoded strictly: `kind` selects the shape and the keys it takes.
extension RateSegment: Decodable {
    /// Strict decoding; `kind` selects the shape and its keys.
    public init(from decoder: any Decoder) throws {
        let all = [
            "kind", "seconds", "rate", "from", "to", "count", "base", "peak", "atSeconds", "spikeSeconds", "mean",
            "amplitude", "periodSeconds",
        ]
        let probe = try Fields(decoder, allowed: all)
        let kind = try probe.choice("kind", ["constant", "ramp", "steps", "spike", "sine"], default: nil)
        let keys: [String] =
            switch kind {
            case "constant": ["rate"]
            case "ramp": ["from", "to"]
            case "steps": ["from", "to", "count"]
            case "spike": ["base", "peak", "atSeconds", "spikeSeconds"]
            default: ["mean", "amplitude", "periodSeconds"]
            }
        let f = try Fields(decoder, allowed: ["kind", "seconds"] + keys)
        let seconds = try f.number("seconds", in: Self.secondsBounds, default: nil)
        func rate(_ key: String) throws -> Double { try f.number(key, in: Self.rateBounds, default: nil) }
        let shape: Shape
        switch kind {
        case "constant":
            shape = .constant(rate: try rate("rate"))
        case "ramp":
            shape = .ramp(from: try rate("from"), to: try rate("to"))
        case "steps":
            shape = .steps(
                from: try rate("from"),
                to: try rate("to"),
                count: Int(try f.integer("count", in: 1...10_000, default: nil))
            )
        case "spike":
            let at = try f.number("atSeconds", in: 0...seconds, default: 0)
            let length = try f.number("spikeSeconds", in: 0.001...seconds, default: nil)
            shape = .spike(base: try rate("base"), peak: try rate("peak"), atSeconds: at, spikeSeconds: length)
        default:
            let mean = try rate("mean")
            let amplitude = try f.number("amplitude", in: 0...mean, default: nil)
            shape = .sine(
                mean: mean,
                amplitude: amplitude,
                periodSeconds: try f.number("periodSeconds", in: Self.secondsBounds, default: nil)
            )
        }
        self.init(shape, seconds: seconds)
    }
}
