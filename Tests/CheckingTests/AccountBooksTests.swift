import Chaos
import Profile
import Simulation
import Testing

@testable import Checking

/// The books found by an account's index (the run's path) are the books found by its token: an index that
/// names another account, or none, changes no judgement.
struct AccountBooksTests {
    @Test func booksFoundByIndexAreTheBooksOfTheToken() {
        var books = AccountBooks()
        // Each account's book is told apart by its `sequence`.
        var model: [String: UInt64] = [:]
        // Indexes that collide, change, are negative or past the limit: each lookup still goes by the token.
        let indexes = [0, 1, 0, 2, -1, AccountBooks.indexLimit, 1, 7, 3, 0]
        for round in 0..<60 {
            let token = "token-\(round % 9)"
            let index = indexes[round % indexes.count] + round / 20
            // Every other round finds the book only if it is there, the others open one if need be.
            let found = round % 2 == 0 ? books.position(of: token, index: index) : books.opening(token, index: index)
            guard let position = found else {
                #expect(model[token] == nil)
                continue
            }
            var book = books.take(at: position)
            #expect(book.sequence == model[token] ?? 0)
            book.sequence += UInt64(round) + 1
            model[token] = book.sequence
            books.putBack(&book, at: position)
        }
        #expect(books.count == model.count)
        #expect(Set(books.accounts) == Set(model.keys))
        for (token, mark) in model { #expect(books[token]?.sequence == mark) }
        var one = AccountBook()
        one.sequence = 1
        books.store(one, for: "token-0")
        books.store(one, for: "new")
        #expect(books["token-0"]?.sequence == 1)
        #expect(books["new"]?.sequence == 1)
        #expect(books.count == model.count + 1)
        #expect(books.accounts { $0.sequence == 1 }.sorted() == ["new", "token-0"])
    }

    @Test func decimalIDsReadAsUInt64ReadsThem() {
        let texts = [
            "1", "9", "10", "0", "012", "+12", "-1", "", "1a", "a1", "12 ", " 12", "1_000", "２", "1２",
            "18446744073709551615", "18446744073709551616", "99999999999999999999", "100000000000000000000",
            "2000000012345678", String(repeating: "1", count: 21), "1é",
        ]
        for text in texts {
            let expected =
                text.utf8.first.map { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") } == true
                ? UInt64(text) : nil
            #expect(RecordKey.decimal(text) == expected, "\(text)")
        }
    }

    /// Plays a world's run into a checker, each delivery's account index given by `index` (rejecting every fifth
    /// answer), and judges every account against a correct target and an empty one.
    static func judged(
        _ profile: Profile,
        index: (PlannedDelivery) -> Int
    ) -> (results: [CheckResult], verdict: Verdict) {
        let checker = Checker(profile: profile, startMillis: start)
        var ideal = IdealTarget()
        let planned = Array(ChaosStream(World(profile: profile, startMillis: start), profile: profile))
        for (position, var delivery) in planned.enumerated() {
            let outcome: DeliveryOutcome = position % 5 == 0 ? .rejected(status: 500) : .acknowledged(status: 200)
            if outcome.isAcknowledged { ideal.apply(delivery) }
            delivery.action.account = index(delivery)
            checker.sent(delivery, at: delivery.at)
            if delivery.sends { checker.record(delivery, outcome: outcome, at: delivery.at + 0.01) }
        }
        var results: [CheckResult] = []
        for t in [30.0, 50.0] {
            for account in checker.knownAccounts() {
                for state in [ideal.state(account, at: t), AccountState()] {
                    results += checker.check(account: account, state: state, at: t, final: t > 40)
                }
            }
        }
        return (results, checker.verdict(unchecked: []))
    }

    @Test(arguments: [UInt64(5), 8])
    func accountIndexesThatNameOtherAccountsChangeNoJudgement(seed: UInt64) throws {
        let profile = try checkingProfile(
            faults: """
                { forgery: { probability: 0.2 }, askToBuy: { probability: 0.2, pendingSeconds: 2 },
                  duplicate: { probability: 0.2, afterSuccess: 0.3, concurrent: 0.3 } }
                """,
            seed: seed
        )
        let world = Self.judged(profile) { $0.action.account }
        try #require(world.results.count > 100)
        #expect(world.verdict.violationCount > 0)
        // All the same index, indexes that wander between accounts, and none the books remember.
        let shuffles: [(PlannedDelivery) -> Int] = [{ _ in 0 }, { Int($0.id % 4) }, { _ in -1 }]
        for shuffle in shuffles {
            let other = Self.judged(profile, index: shuffle)
            #expect(other.results == world.results)
            #expect(other.verdict == world.verdict)
        }
    }
}
