import Foundation

// What `paystorm bench` measures with: operation counts over wall-clock and CPU time, and the process's memory.

/// Operations counted over a wall-clock span and the CPU time the measuring threads used.
struct BenchSample: Sendable {
    var count: Double = 0
    /// Mean elapsed wall-clock time of the threads.
    var wallSeconds: Double = 0
    /// CPU time of all the threads together.
    var cpuSeconds: Double = 0

    mutating func add(_ other: BenchSample) {
        count += other.count
        wallSeconds += other.wallSeconds
        cpuSeconds += other.cpuSeconds
    }

    var rate: BenchRate {
        BenchRate(
            wall: wallSeconds > 0 ? count / wallSeconds : 0,
            perCPUSecond: cpuSeconds > 0 ? count / cpuSeconds : 0
        )
    }
}

/// A measured rate: operations per wall-clock second (all threads together) and per CPU-second.
struct BenchRate: Sendable {
    var wall: Double
    var perCPUSecond: Double
}

/// CPU time used by the calling thread, in seconds.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Resident set size from /proc/self/statm, in MiB.
func residentMegabytes() -> String {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return "unknown" }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Double(fields[1]) else { return "unknown" }
    return String(format: "%.1f MiB", pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576)
}

func executablePath(_ name: String) -> String? {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let candidate = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
}
