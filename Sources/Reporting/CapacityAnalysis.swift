import Foundation

/// One service-level objective as observed on one capacity step.
public struct SLOObservation: Codable, Sendable, Hashable {
    /// The objective as written, for example `p99 < 250ms`.
    public var expression: String
    /// The observed value: µs for latency, a fraction for `errorRate`, a count or a rate otherwise.
    public var observed: Double
    /// The observed value for people, for example `212.4ms`.
    public var observedText: String
    /// The objective's bound, in the unit of ``SLOObservation/observed``.
    public var bound: Double
    /// Whether the objective held on the step.
    public var held: Bool

    /// Creates an observation.
    public init(expression: String, observed: Double, observedText: String, bound: Double, held: Bool) {
        self.expression = expression
        self.observed = observed
        self.observedText = observedText
        self.bound = bound
        self.held = held
    }
}

extension SLOObservation {
    /// The objective that judges correctness beside speed (`--slo invariants`): it breaks on a step whose run
    /// failed an invariant; an unknown verdict does not break it.
    public static let invariantsExpression = "invariants"

    /// The ``invariantsExpression`` objective on a step whose run failed these invariants (name: violations).
    /// Its bound is "fewer than one violation", so where it breaks interpolates between steps as a count's does.
    /// `undecided` counts the invariants the run left unknown or unchecked, said beside a hold so that an
    /// objective that held only because nothing was checked (a target without a probe) does not look proven.
    public static func invariants(failed: [String: Int], undecided: Int = 0) -> SLOObservation {
        let held = undecided == 0 ? "none failed" : "none failed (\(undecided) undecided)"
        return SLOObservation(
            expression: invariantsExpression,
            observed: Double(failed.values.reduce(0, +)),
            observedText: failed.isEmpty ? held : CapacityStep.invariantsText(failed),
            bound: 1,
            held: failed.isEmpty
        )
    }
}

/// Latency percentiles of one step, in microseconds.
public struct StepPercentiles: Codable, Sendable, Hashable {
    /// The median.
    public var p50: Int64
    /// The 90th percentile.
    public var p90: Int64
    /// The 99th percentile.
    public var p99: Int64
    /// The 99.9th percentile.
    public var p999: Int64

    /// Creates percentiles.
    public init(p50: Int64, p90: Int64, p99: Int64, p999: Int64) {
        self.p50 = p50
        self.p90 = p90
        self.p99 = p99
        self.p999 = p999
    }
}

/// One constant-rate step of `paystorm capacity`, measured over its judged window (the step after its
/// warm-up seconds): the inputs of ``CapacityReport``.
public struct CapacityStep: Codable, Sendable, Hashable {
    /// The step's place in the order the search ran it, from 1.
    public var index: Int
    /// The schedule's constant rate, in actions per second (what a profile's schedule states).
    public var rate: Double
    /// How long the step's schedule lasted, in seconds.
    public var seconds: Double
    /// The first seconds of the step, not judged: connections open and queues fill.
    public var warmupSeconds: Double
    /// The step's report folder, relative to the capacity folder (or as given to `--from`).
    public var folder: String
    /// Deliveries per second the schedule intended in the judged window.
    public var offered: Double
    /// Deliveries per second that succeeded in the judged window: the throughput X.
    public var achieved: Double
    /// Latency from the intended send time (no coordinated omission).
    public var latency: StepPercentiles
    /// Service time: from the moment the request went on a connection.
    public var service: StepPercentiles
    /// Mean service time in microseconds (Little's law takes the mean).
    public var meanServiceMicros: Double
    /// Failed results in the judged window by class (`non_2xx`, `timeout`, `reset`...).
    public var errors: [String: Int]
    /// Sends released after their intended time in the judged window.
    public var late: Int
    /// Sends skipped at the in-flight cap in the judged window.
    public var missed: Int
    /// The most requests in flight at the end of a second of the judged window.
    public var inFlight: Int
    /// CPU cores PayStorm's own process used over the judged window (nil when not measured).
    public var harnessCPU: Double?
    /// Why the step measured PayStorm rather than the target, when it did (the run's harness-limited
    /// sentence); nil when PayStorm kept up.
    public var harnessLimited: String?
    /// Each objective on the step's figures.
    public var slos: [SLOObservation]
    /// The invariants the step's own run failed, with their violations (empty when none failed; nil in a
    /// `capacity.json` written before steps recorded them). The search judges rates by the objectives (which
    /// count these only with `--slo invariants`), but a backend that breaks an invariant at some rate must not
    /// pass unseen.
    public var failedInvariants: [String: Int]?
    /// How long the search let the target recover before the step, and whether it did (nil for the first step,
    /// for the embedded ledger, which each step starts afresh, and with `--recovery-timeout 0`).
    public var recovery: CapacityRecovery?

    /// Creates a step.
    public init(
        index: Int,
        rate: Double,
        seconds: Double,
        warmupSeconds: Double,
        folder: String,
        offered: Double,
        achieved: Double,
        latency: StepPercentiles,
        service: StepPercentiles,
        meanServiceMicros: Double,
        errors: [String: Int] = [:],
        late: Int = 0,
        missed: Int = 0,
        inFlight: Int = 0,
        harnessCPU: Double? = nil,
        harnessLimited: String? = nil,
        slos: [SLOObservation] = [],
        failedInvariants: [String: Int]? = nil,
        recovery: CapacityRecovery? = nil
    ) {
        self.index = index
        self.rate = rate
        self.seconds = seconds
        self.warmupSeconds = warmupSeconds
        self.folder = folder
        self.offered = offered
        self.achieved = achieved
        self.latency = latency
        self.service = service
        self.meanServiceMicros = meanServiceMicros
        self.errors = errors
        self.late = late
        self.missed = missed
        self.inFlight = inFlight
        self.harnessCPU = harnessCPU
        self.harnessLimited = harnessLimited
        self.slos = slos
        self.failedInvariants = failedInvariants
        self.recovery = recovery
    }

    /// The failed invariants as `name (N violations)`, by name; empty when none failed.
    public var failedInvariantsText: String { Self.invariantsText(failedInvariants ?? [:]) }

    /// Invariants and their violations as `name (N violations)`, by name.
    static func invariantsText(_ violations: [String: Int]) -> String {
        violations.sorted { $0.key < $1.key }
            .map { "\($0.key) (\($0.value) violation\($0.value == 1 ? "" : "s"))" }.joined(separator: ", ")
    }

    /// Concurrency from Little's law, N = X × mean service time: requests inside the target on average.
    public var concurrency: Double { achieved * meanServiceMicros / 1_000_000 }

    /// Whether every objective held and PayStorm kept up.
    public var isGood: Bool { harnessLimited == nil && slos.allSatisfy(\.held) }
}

/// The Universal Scalability Law fitted to concurrency against throughput:
/// X(N) = λN / (1 + σ(N−1) + κN(N−1)).
public struct USLFit: Codable, Sendable, Hashable {
    /// Contention (serialization), 0 ≤ σ < 1.
    public var sigma: Double
    /// Coherency (crosstalk), κ ≥ 0.
    public var kappa: Double
    /// Throughput of one unit of concurrency, per second.
    public var lambda: Double
    /// The coefficient of determination of the fit on throughput.
    public var rSquared: Double

    /// Creates a fit.
    public init(sigma: Double, kappa: Double, lambda: Double, rSquared: Double) {
        self.sigma = sigma
        self.kappa = kappa
        self.lambda = lambda
        self.rSquared = rSquared
    }

    /// The law's throughput at concurrency `n`.
    public func throughput(at n: Double) -> Double { lambda * n / (1 + sigma * (n - 1) + kappa * n * (n - 1)) }

    /// The concurrency of peak throughput, N* = √((1−σ)/κ); nil without coherency cost (no peak).
    public var peakConcurrency: Double? { kappa > 0 && sigma < 1 ? ((1 - sigma) / kappa).squareRoot() : nil }

    /// The predicted peak throughput X(N*), nil without a peak.
    public var peakThroughput: Double? { peakConcurrency.map(throughput(at:)) }

    /// The most throughput the law allows: X(N*) with a peak; without one (κ = 0) X rises towards λ/σ as N
    /// grows; nil when σ is 0 too (no limit predicted).
    public var ceiling: Double? { peakThroughput ?? (sigma > 0 ? lambda / sigma : nil) }

    /// Fits the law by least squares on throughput: a linear fit of N/X = a + bN + cN² gives the start, and
    /// Levenberg–Marquardt refines it on X itself, keeping σ in [0, 1) and κ ≥ 0.
    /// - Parameter points: (N, X) pairs with N > 0 and X > 0.
    /// - Returns: the fit, or nil with fewer than three distinct concurrencies.
    public static func fit(_ points: [(n: Double, x: Double)]) -> USLFit? {
        let points = points.filter { $0.n > 0 && $0.x > 0 && $0.n.isFinite && $0.x.isFinite }
        guard Set(points.map(\.n)).count >= 3 else { return nil }
        var p = initialGuess(points)
        var mu = 1e-3
        var error = squaredError(points, p)
        for _ in 0..<500 {
            var jtj = [[Double]](repeating: [0, 0, 0], count: 3)
            var jtr = [0.0, 0, 0]
            for point in points {
                let d = 1 + p[1] * (point.n - 1) + p[2] * point.n * (point.n - 1)
                let f = p[0] * point.n / d
                let j = [
                    point.n / d, -p[0] * point.n * (point.n - 1) / (d * d),
                    -p[0] * point.n * point.n * (point.n - 1) / (d * d),
                ]
                for r in 0..<3 {
                    jtr[r] += j[r] * (point.x - f)
                    for c in 0..<3 { jtj[r][c] += j[r] * j[c] }
                }
            }
            var improved = false
            while mu < 1e12 {
                var a = jtj
                for i in 0..<3 { a[i][i] += mu * max(jtj[i][i], 1e-30) }
                guard let step = solve(a, jtr) else { break }
                var candidate = zip(p, step).map { $0 + $1 }
                candidate[0] = max(candidate[0], 1e-12)
                candidate[1] = min(max(candidate[1], 0), 0.999_999)
                candidate[2] = max(candidate[2], 0)
                let candidateError = squaredError(points, candidate)
                if candidateError < error {
                    let gain = error - candidateError
                    p = candidate
                    error = candidateError
                    mu = max(mu / 3, 1e-12)
                    improved = gain > 1e-15 * max(error, 1e-30)
                    break
                }
                mu *= 4
            }
            if !improved { break }
        }
        let mean = points.map(\.x).reduce(0, +) / Double(points.count)
        let total = points.reduce(0) { $0 + ($1.x - mean) * ($1.x - mean) }
        let rSquared = total > 0 ? 1 - error / total : (error < 1e-12 ? 1 : 0)
        return USLFit(sigma: p[1], kappa: p[2], lambda: p[0], rSquared: rSquared)
    }

    /// λ, σ, κ from the linear least-squares fit of N/X = a + bN + cN², where a = (1−σ)/λ, b = (σ−κ)/λ and
    /// c = κ/λ, clamped into the law's domain.
    private static func initialGuess(_ points: [(n: Double, x: Double)]) -> [Double] {
        var a = [[Double]](repeating: [0, 0, 0], count: 3)
        var b = [0.0, 0, 0]
        for point in points {
            let row = [1, point.n, point.n * point.n]
            for r in 0..<3 {
                b[r] += row[r] * point.n / point.x
                for c in 0..<3 { a[r][c] += row[r] * row[c] }
            }
        }
        let bestRatio = points.map { $0.x / $0.n }.max() ?? 1
        guard let coefficients = solve(a, b), coefficients.reduce(0, +) > 0 else { return [bestRatio, 0, 0] }
        let lambda = 1 / coefficients.reduce(0, +)
        let kappa = max(coefficients[2] * lambda, 0)
        let sigma = min(max(coefficients[1] * lambda + kappa, 0), 0.99)
        return [lambda, sigma, kappa]
    }

    private static func squaredError(_ points: [(n: Double, x: Double)], _ p: [Double]) -> Double {
        points.reduce(0) { sum, point in
            let f = p[0] * point.n / (1 + p[1] * (point.n - 1) + p[2] * point.n * (point.n - 1))
            return sum + (point.x - f) * (point.x - f)
        }
    }

    /// Solves a small linear system by Gaussian elimination with partial pivoting; nil when singular.
    private static func solve(_ matrix: [[Double]], _ vector: [Double]) -> [Double]? {
        var a = matrix
        var b = vector
        let n = b.count
        for column in 0..<n {
            guard let pivot = (column..<n).max(by: { abs(a[$0][column]) < abs(a[$1][column]) }),
                abs(a[pivot][column]) > 1e-300
            else { return nil }
            a.swapAt(column, pivot)
            b.swapAt(column, pivot)
            for row in (column + 1)..<n {
                let factor = a[row][column] / a[column][column]
                for c in column..<n { a[row][c] -= factor * a[column][c] }
                b[row] -= factor * b[column]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var sum = b[row]
            for c in (row + 1)..<n { sum -= a[row][c] * x[c] }
            x[row] = sum / a[row][row]
        }
        return x.allSatisfy(\.isFinite) ? x : nil
    }
}

/// Where one objective stopped holding as the rate rose.
public struct SLOBreak: Codable, Sendable, Hashable {
    /// The objective as written.
    public var expression: String
    /// The rate (actions/s) where the observed value reaches the bound, interpolated linearly between the
    /// highest step that held and the first that did not; nil when it held at every step or broke already
    /// at the lowest.
    public var rate: Double?
    /// The highest rate at which it held below the break (nil when it broke at the lowest step).
    public var lastHeld: Double?
    /// The lowest rate at which it did not hold (nil when it held at every step).
    public var firstBroken: Double?

    /// Creates a break.
    public init(expression: String, rate: Double?, lastHeld: Double?, firstBroken: Double?) {
        self.expression = expression
        self.rate = rate
        self.lastHeld = lastHeld
        self.firstBroken = firstBroken
    }

    /// Where the objective breaks, for steps sorted by rate (harness-limited steps measure PayStorm, so
    /// they are left out): the first step it fails on and the step just below it.
    public static func find(_ expression: String, in steps: [CapacityStep]) -> SLOBreak {
        let judged = steps.filter { $0.harnessLimited == nil }.sorted { $0.rate < $1.rate }
        func observation(_ step: CapacityStep) -> SLOObservation? { step.slos.first { $0.expression == expression } }
        guard let failing = judged.firstIndex(where: { observation($0)?.held == false }) else {
            return SLOBreak(expression: expression, rate: nil, lastHeld: judged.last?.rate, firstBroken: nil)
        }
        let bad = judged[failing]
        guard failing > 0, let high = observation(bad), let low = observation(judged[failing - 1]) else {
            return SLOBreak(expression: expression, rate: nil, lastHeld: nil, firstBroken: bad.rate)
        }
        let good = judged[failing - 1]
        var fraction = high.observed == low.observed ? 1 : (high.bound - low.observed) / (high.observed - low.observed)
        fraction = min(max(fraction.isFinite ? fraction : 1, 0), 1)
        return SLOBreak(
            expression: expression,
            rate: good.rate + fraction * (bad.rate - good.rate),
            lastHeld: good.rate,
            firstBroken: bad.rate
        )
    }
}
