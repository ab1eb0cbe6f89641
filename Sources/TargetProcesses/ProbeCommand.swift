import Checking
import Foundation
import RunControl

/// A probe's command (a `command` or `bulk` probe, or an `http` probe's `transform`), run with a deadline as a
/// ``CapturedCommand``. Every failure is a ``ProbeError``, so the account's checks become unknown, never a crash
/// or a pass.
enum ProbeCommand {
    /// Runs `arguments` (no shell; a bare name is searched in `PATH`) with `input` on its standard input.
    /// - Parameters:
    ///   - arguments: the argument vector; the first element is the program.
    ///   - input: bytes for its standard input (empty: an empty input).
    ///   - timeout: seconds it may run before its session is killed.
    ///   - interruption: kills it when the run is interrupted.
    /// - Returns: its standard output.
    /// - Throws: ``ProbeError/transport(_:)`` naming the command, with its exit status and the first line of
    ///   its standard error, or the timeout.
    static func run(
        _ arguments: [String],
        input: [UInt8] = [],
        timeout: Double,
        interruption: Interruption,
        maxOutputBytes: Int = CapturedCommand.defaultOutputLimit
    ) throws(ProbeError) -> [UInt8] {
        guard !arguments.isEmpty else { throw .transport("the probe command is empty") }
        let shown = "'\(arguments.joined(separator: " "))'"
        let output: CapturedCommand.Output
        do {
            output = try CapturedCommand.run(
                arguments,
                input: input,
                timeout: timeout,
                interruption: interruption,
                maxOutputBytes: maxOutputBytes
            )
        } catch {
            switch error {
            case .cannotStart(let reason): throw .transport("cannot start \(shown): \(reason)")
            case .lost(let reason): throw .transport("lost \(shown): \(reason)")
            case .timedOut, .noScratchFile, .interrupted, .outputTooLarge: throw .transport("\(shown) \(error)")
            }
        }
        guard output.status == 0 else {
            let message = String(decoding: output.stderr.prefix(4096), as: UTF8.self)
            let firstLine = message.split(whereSeparator: \.isNewline).first.map { ": \($0)" } ?? ""
            throw .transport("\(shown) exited \(output.status)\(firstLine)")
        }
        return output.stdout
    }
}
