import Load
import Testing

@testable import PayStorm

/// An answer of `status` to a request of `kind`, at time zero (the tallies read only those two).
func answer(_ status: Int, kind: String) -> LoadResult {
    LoadResult(id: 0, kind: kind, intended: .zero, sent: .zero, wireStart: .zero, received: .zero, status: status)
}

/// Requests the target refused as unauthorized: one note, with the fix when tokens were provisioned once.
struct UnauthorizedTallyTests {

    @Test func refusedCredentialsAreCountedByKindAndSaidOnce() {
        var tally = UnauthorizedTally()
        #expect(tally.note(provisionedOnce: true) == nil)
        tally.record(answer(200, kind: "device"), at: 1)
        tally.record(answer(404, kind: "device"), at: 1.5)
        tally.record(answer(401, kind: "device"), at: 3.62)
        tally.record(answer(403, kind: "device"), at: 4)
        tally.record(answer(401, kind: "probe"), at: 5)
        #expect(tally.counts == ["device": 2, "probe": 1])
        #expect(
            tally.note(provisionedOnce: false)
                == "3 requests were refused as unauthorized (HTTP 401 or 403: 2 device, 1 probe), the first at t=3.6 s: "
                + "the target refused the credentials they carried (target.headers, a role's or the probe's headers, "
                + "the accounts' fields), so they were not processed"
        )
        #expect(
            tally.note(provisionedOnce: true)?.hasSuffix(
                "; tokens that expire during a run need target.accounts.refreshSeconds"
            ) == true
        )
    }
}
