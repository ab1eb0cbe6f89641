import Foundation
import RunControl
import Testing

@testable import TargetProcesses

/// `target.accounts.provision`: what a command that exits 0 must have printed.
struct AccountProvisioningTests {
    /// A command that exited 0 without a line gave a PASS with every `{account.*}` sent empty.
    @Test func aCommandThatPrintsNoAccountStopsTheRunWithExit69() throws {
        let token = "7D1A5C2E-0B7F-4C1E-9A53-2F6D8E4B1C90"
        for script in ["cat >/dev/null", "cat >/dev/null; echo; echo '  '"] {
            do {
                _ = try AccountProvisioning.run(
                    ["/bin/sh", "-c", script],
                    tokens: [token],
                    timeout: 20,
                    interruption: Interruption()
                )
                Issue.record("'\(script)' printed no account and passed")
            } catch .unreachable(let message) {
                #expect(message.contains("target.accounts.provision '/bin/sh -c \(script)'"), "\(message)")
                #expect(message.contains("printed no account"), "\(message)")
            } catch {
                Issue.record("not exit 69: \(error)")
            }
        }
    }
}
