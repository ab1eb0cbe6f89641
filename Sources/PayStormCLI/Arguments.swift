import PayStorm
import RunControl

/// A small command-line parser: options are consumed by name, whatever is left
/// over is an error. `--name value` and `--name=value` both work.
///
/// ```swift
/// var args = Arguments(["--seed", "7", "out"])
/// let seed = try args.int("--seed") ?? 1
/// let dir = try args.requiredPositional("DIR")
/// try args.finish()
/// ```
public struct Arguments: Sendable {
    private var items: [String]

    /// Creates a parser over the arguments that follow the command name.
    public init(_ items: [String]) {
        self.items = items
    }

    /// The first argument not yet taken, such as a subcommand's word (`trend` in `paystorm capacity trend`).
    public var first: String? { items.first }

    /// Whether the arguments ask for help (`-h` or `--help`).
    public var wantsHelp: Bool { items.contains("--help") || items.contains("-h") }

    /// Removes a boolean flag and tells whether it was present.
    public mutating func flag(_ name: String) -> Bool {
        guard let index = items.firstIndex(of: name) else { return false }
        items.remove(at: index)
        return true
    }

    /// Removes the last occurrence of a valued option and returns its value.
    /// - Throws: `CLIError` with `.usage` when the option has no value.
    public mutating func option(_ name: String) throws -> String? {
        try options(name).last
    }

    /// Removes every occurrence of a repeatable valued option.
    /// - Throws: `CLIError` with `.usage` when an occurrence has no value.
    public mutating func options(_ name: String) throws -> [String] {
        var values: [String] = []
        var index = 0
        while index < items.count {
            let item = items[index]
            if item == name {
                guard index + 1 < items.count, !items[index + 1].hasPrefix("--") else {
                    throw CLIError(.usage, "option \(name) needs a value")
                }
                values.append(items[index + 1])
                items.removeSubrange(index...(index + 1))
            } else if item.hasPrefix(name + "=") {
                values.append(String(item.dropFirst(name.count + 1)))
                items.remove(at: index)
            } else {
                index += 1
            }
        }
        return values
    }

    /// Removes an integer option.
    /// - Throws: `CLIError` with `.usage` when the value is not an integer.
    public mutating func int(_ name: String) throws -> Int? {
        guard let text = try option(name) else { return nil }
        guard let value = Int(text) else {
            throw CLIError(.usage, "option \(name) expects an integer, got '\(text)'")
        }
        return value
    }

    /// Removes a non-negative 64-bit integer option, such as a seed.
    /// - Throws: `CLIError` with `.usage` when the value is not a non-negative integer.
    public mutating func uint64(_ name: String) throws -> UInt64? {
        guard let text = try option(name) else { return nil }
        guard let value = UInt64(text) else {
            throw CLIError(.usage, "\(name) expects a non-negative integer, got '\(text)'")
        }
        return value
    }

    /// Removes `--seed`: an integer from 0 to `Int64.max`, the range a profile's `seed` has, so that a seed the
    /// command line accepts is one a report's replay line (and a profile) can carry.
    /// - Throws: `CLIError` with `.usage` naming the value otherwise.
    public mutating func seed() throws -> UInt64? {
        guard let text = try option("--seed") else { return nil }
        guard let value = UInt64(text), value <= UInt64(Int64.max) else {
            throw CLIError(.usage, "--seed expects an unsigned integer from 0 to \(Int64.max), got '\(text)'")
        }
        return value
    }

    /// Removes an option naming a folder; an empty value (`--reports ''`, an unset shell variable) is refused
    /// rather than read as the current directory.
    /// - Throws: `CLIError` with `.usage` when the value is empty.
    public mutating func folder(_ name: String) throws -> String? {
        guard let text = try option(name) else { return nil }
        guard !text.isEmpty else { throw CLIError(.usage, "\(name) expects a folder, got an empty value") }
        return text
    }

    /// Removes a floating-point option.
    /// - Throws: `CLIError` with `.usage` when the value is not a number.
    public mutating func double(_ name: String) throws -> Double? {
        guard let text = try option(name) else { return nil }
        guard let value = Double(text), value.isFinite else {
            throw CLIError(.usage, "option \(name) expects a number, got '\(text)'")
        }
        return value
    }

    /// Removes the first positional argument, if any.
    public mutating func positional() -> String? {
        guard let index = items.firstIndex(where: { !$0.hasPrefix("-") || $0 == "-" }) else { return nil }
        return items.remove(at: index)
    }

    /// Removes the first positional argument.
    /// - Throws: `CLIError` with `.usage` naming the missing argument.
    public mutating func requiredPositional(_ label: String) throws -> String {
        guard let value = positional() else { throw CLIError(.usage, "missing argument \(label)") }
        return value
    }

    /// Fails on anything not consumed.
    /// - Throws: `CLIError` with `.usage` naming the first unknown argument.
    public func finish() throws {
        if let first = items.first {
            throw CLIError(.usage, "unknown argument '\(first)'")
        }
    }
}
