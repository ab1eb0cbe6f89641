import Foundation
import Profile
import RunControl
import Testing

@testable import PayStorm

/// `target.accounts.refreshSeconds`: the provisioning command run again while a run lasts.
struct AccountRefresherTests {
    private static let account = "0A1B2C3D-0000-4000-8000-00000000000F"

    /// A refresher whose first refresh is due at once, running `script` through `sh -c`.
    private static func refresher(_ script: String, directory: AccountDirectory) -> AccountRefresher {
        AccountRefresher(
            .init(command: ["/bin/sh", "-c", script], tokens: [account], timeout: 10, interruption: Interruption()),
            every: 30,
            into: directory,
            startMillis: Int64((Date().timeIntervalSince1970 - 30) * 1000),
            log: { _ in }
        )
    }

    /// Waits (10 s at most) for the first refresh to end.
    private static func firstRefresh(of refresher: AccountRefresher) {
        let deadline = Date().addingTimeInterval(10)
        while refresher.refreshes.isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
    }

    @Test func aRefreshGivesEveryCopyOfTheDirectoryTheFreshFields() {
        let directory = AccountDirectory([Self.account: ["token": "old"]])
        let copy = directory
        let refresher = Self.refresher(
            #"cat >/dev/null; echo '{"appAccountToken":"0a1b2c3d-0000-4000-8000-00000000000f","token":"new"}'"#,
            directory: directory
        )
        refresher.start()
        Self.firstRefresh(of: refresher)
        refresher.finish()
        #expect(copy.fields(of: Self.account)["token"] == "new")
        #expect(refresher.notes.count == 1)
        #expect(
            refresher.notes.first?.hasPrefix(
                "accounts re-provisioned every 30 s (target.accounts.refreshSeconds): 1 refresh, all succeeded"
            ) == true,
            "\(refresher.notes)"
        )
    }

    @Test func aFailedRefreshKeepsTheFieldsAndIsSaid() {
        let directory = AccountDirectory([Self.account: ["token": "old"]])
        let refresher = Self.refresher("cat >/dev/null; echo 'token service down' >&2; exit 3", directory: directory)
        refresher.start()
        Self.firstRefresh(of: refresher)
        refresher.finish()
        #expect(directory.fields(of: Self.account)["token"] == "old")
        let note = refresher.notes.first ?? ""
        #expect(note.contains("1 of 1 refresh failed, and the accounts kept their previous fields"), "\(note)")
        #expect(note.contains("exited 3") && note.contains("token service down"), "\(note)")
    }

    @Test func aRunThatEndsBeforeTheFirstRefreshSaysSo() {
        let refresher = AccountRefresher(
            .init(command: ["/bin/true"], tokens: [Self.account], timeout: 10, interruption: Interruption()),
            every: 600,
            into: AccountDirectory(),
            startMillis: Int64(Date().timeIntervalSince1970 * 1000),
            log: { _ in }
        )
        refresher.start()
        refresher.finish()
        #expect(
            refresher.notes == [
                "accounts re-provisioned every 600 s (target.accounts.refreshSeconds): none, the run ended first"
            ]
        )
    }
}
