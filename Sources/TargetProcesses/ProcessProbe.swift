package import Checking
import Primitives
package import Profile
package import RunControl

/// Reads accounts through the profile's probe commands: a `command` probe runs once per account, a `bulk`
/// probe once for any number of accounts, and an `http` probe's `transform` turns one fetched body into the
/// contract JSON. Shared by the safety rounds during the run and by the final probe.
package struct ProcessProbe: Sendable {
    /// One account's answer.
    package typealias Answer = (account: String, state: Result<AccountState, ProbeError>)

    private let config: ProbeConfig
    private let accounts: AccountDirectory
    private let interruption: Interruption

    /// - Parameters:
    ///   - config: the profile's probe.
    ///   - accounts: the run's provisioned accounts, whose fields a bulk command gets on its standard input
    ///     (copies share refreshes).
    ///   - interruption: kills a command in progress when the run is interrupted; none starts after.
    package init(config: ProbeConfig, accounts: AccountDirectory = AccountDirectory(), interruption: Interruption) {
        self.config = config
        self.accounts = accounts
        self.interruption = interruption
    }

    /// A bulk command's standard input: one `{"appAccountToken", "id", ...}` line per account it is to print,
    /// holding the account's provisioned fields as strings (`id` is the token when none was provisioned), the
    /// token first and the other keys sorted, as provisioning prints them.
    /// - Parameters:
    ///   - accounts: the tokens of the accounts read.
    ///   - directory: their provisioned fields.
    package static func accountLines(_ accounts: [String], directory: AccountDirectory) -> [UInt8] {
        var bytes: [UInt8] = []
        for account in accounts {
            var line = "{\"appAccountToken\":\"\(JSONEscaping.escaped(account))\""
            for (key, value) in directory.fields(of: account).sorted(by: { $0.key < $1.key })
            where key != "appAccountToken" {
                line += ",\"\(JSONEscaping.escaped(key))\":\"\(JSONEscaping.escaped(value))\""
            }
            bytes += Array((line + "}\n").utf8)
        }
        return bytes
    }

    /// Whether this probe reads accounts by running a command (`command` or `bulk`).
    package var readsByCommand: Bool { (config.kind == .command || config.kind == .bulk) && config.command != nil }

    /// How many accounts one safety round reads: a bulk run answers any number at once.
    package var batchLimit: Int { config.kind == .bulk ? .max : config.sampleAccounts }

    /// Reads `accounts`: one bulk run for all of them (their lines on its standard input, see
    /// ``accountLines(_:directory:)``), or one command run each. An account the bulk output does not name is
    /// ``ProbeError/missingAccount(_:)`` (unknown), never an empty state.
    package func read(_ accounts: [String]) -> [Answer] {
        guard let command = config.command, !accounts.isEmpty else { return [] }
        if config.kind == .bulk {
            let answer: BulkAnswer
            do {
                answer = try JSONLines.parse(
                    try ProbeCommand.run(
                        command,
                        input: Self.accountLines(accounts, directory: self.accounts),
                        timeout: config.timeoutSeconds,
                        interruption: interruption,
                        maxOutputBytes: CapturedCommand.outputLimit(accounts: accounts.count)
                    )
                )
            } catch let error as ProbeError {
                return accounts.map { ($0, .failure(error)) }
            } catch {
                return accounts.map { ($0, .failure(.transport("\(error)"))) }
            }
            return accounts.map { account in
                (account, Result { () throws(ProbeError) in try answer.state(of: account) })
            }
        }
        return accounts.map { account in
            let argv = command.map { ProbeConfig.substitute(account: account, in: $0) }
            return (
                account,
                Result { () throws(ProbeError) in
                    try decodeContract(
                        try ProbeCommand.run(argv, timeout: config.timeoutSeconds, interruption: interruption)
                    )
                }
            )
        }
    }

    /// Runs the `http` probe's `transform` on a fetched body (the body itself when there is none).
    package func transform(_ body: [UInt8]) -> Result<AccountState, ProbeError> {
        Result { () throws(ProbeError) in
            guard let transform = config.transform else { return try decodeContract(body) }
            return try decodeContract(
                try ProbeCommand.run(
                    transform,
                    input: body,
                    timeout: config.timeoutSeconds,
                    interruption: interruption
                )
            )
        }
    }

    private func decodeContract(_ bytes: [UInt8]) throws(ProbeError) -> AccountState {
        do {
            return try AccountState.decode(contractJSON: bytes)
        } catch let error as ProbeError {
            throw error
        } catch {
            throw .badJSON("\(error)")
        }
    }
}
