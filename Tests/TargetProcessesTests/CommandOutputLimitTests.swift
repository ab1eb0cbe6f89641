import Checking
import Foundation
import RunControl
import Testing

@testable import TargetProcesses

/// A probe or provisioning command that prints without end is refused by its size, before any of it is read.
struct CommandOutputLimitTests {
    @Test func outputPastTheLimitIsRefusedNamingItsSize() {
        #expect {
            _ = try ProbeCommand.run(
                ["sh", "-c", "head -c 3145728 /dev/zero"],
                timeout: 10,
                interruption: Interruption(),
                maxOutputBytes: 1 << 20
            )
        } throws: { error in
            guard case .transport(let message) = error as? ProbeError else { return false }
            return message.contains("printed 3.0 MiB on its standard output, more than the 1.0 MiB PayStorm reads")
        }
    }

    @Test func outputUnderTheLimitIsRead() throws {
        let output = try ProbeCommand.run(
            ["sh", "-c", "head -c 1000 /dev/zero"],
            timeout: 10,
            interruption: Interruption(),
            maxOutputBytes: 1 << 20
        )
        #expect(output.count == 1000)
    }

    @Test func aCommandForManyAccountsMayPrintMore() {
        #expect(CapturedCommand.outputLimit(accounts: 1) == CapturedCommand.defaultOutputLimit)
        #expect(CapturedCommand.outputLimit(accounts: 1_000_000) == 1_000_000 * 16_384)
    }
}
