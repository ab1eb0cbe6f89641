/// Every account's book, found by the account's token, or on the run's path by the account's index too.
///
/// Each delivery the run sends is booked twice (when it is dispatched and when it is answered), and hashing its
/// 36-character token to find the book cost more than the booking itself. A delivery also names the account's
/// index in the world (`Action.account`): the books remember the position of each index's book and compare the
/// token there with the delivery's, so an index that names another token (a test's, a replayed world's) only
/// falls back to the search by token. What the books hold never depends on the indexes.
struct AccountBooks: Sendable {
    /// The account indexes remembered are below this (a world's accounts are numbered from 0), 4 bytes each.
    static let indexLimit = 1 << 24

    private var positions: [String: Int] = [:]
    private var tokens: [String] = []
    private var list: [AccountBook] = []
    /// For each account index, the position of its book plus one (0: none remembered).
    private var byIndex: [UInt32] = []

    /// How many accounts have a book.
    var count: Int { list.count }

    /// Every account that has a book, in no particular order.
    var accounts: [String] { tokens }

    /// The book of an account, if it has one.
    subscript(account: String) -> AccountBook? {
        positions[account].map { list[$0] }
    }

    /// Stores an account's book, adding the account if it had none.
    mutating func store(_ book: AccountBook, for account: String) {
        let position = positions[account] ?? opening(account, index: -1)
        list[position] = book
    }

    /// The accounts whose books pass `include`, in no particular order.
    func accounts(where include: (AccountBook) -> Bool) -> [String] {
        zip(tokens, list).compactMap { include($1) ? $0 : nil }
    }

    /// Makes room for the books of a world's accounts up front (up to 131,072): most runs book a delivery of
    /// each of them, and storage grown one account at a time hashes every token again and moves every book as
    /// it grows. Room not yet used takes address space, not memory.
    mutating func reserve(accounts: Int) {
        let room = min(max(0, accounts), 1 << 17)
        positions.reserveCapacity(room)
        tokens.reserveCapacity(room)
        list.reserveCapacity(room)
        byIndex.reserveCapacity(min(max(0, accounts), Self.indexLimit))
    }

    /// The position of an account's book, found by its index when the book there is the token's, else by the
    /// token (and then remembered for the index); nil when the account has no book.
    mutating func position(of account: String, index: Int) -> Int? {
        if let position = remembered(account, index: index) { return position }
        guard let position = positions[account] else { return nil }
        remember(position, index: index)
        return position
    }

    /// The position of an account's book, adding an empty one for an account that has none, with one search by
    /// token at most (a new account's first delivery is most of a short run's).
    mutating func opening(_ account: String, index: Int) -> Int {
        if let position = remembered(account, index: index) { return position }
        let position = list.count
        if let known = positions.updateValue(position, forKey: account) {
            positions[account] = known
            remember(known, index: index)
            return known
        }
        tokens.append(account)
        list.append(AccountBook())
        remember(position, index: index)
        return position
    }

    /// Takes the book at `position` out, leaving an empty one there, so that its tables change in place rather
    /// than copied; `putBack(_:at:)` returns it.
    mutating func take(at position: Int) -> AccountBook {
        var book = AccountBook()
        swap(&book, &list[position])
        return book
    }

    /// Returns a book taken with `take(at:)`.
    mutating func putBack(_ book: inout AccountBook, at position: Int) {
        swap(&book, &list[position])
    }

    private func remembered(_ account: String, index: Int) -> Int? {
        guard index >= 0, index < byIndex.count, byIndex[index] != 0 else { return nil }
        let position = Int(byIndex[index]) - 1
        return tokens[position] == account ? position : nil
    }

    private mutating func remember(_ position: Int, index: Int) {
        guard index >= 0, index < Self.indexLimit, position < Int(UInt32.max) else { return }
        if index >= byIndex.count { byIndex.append(contentsOf: repeatElement(0, count: index + 1 - byIndex.count)) }
        byIndex[index] = UInt32(position + 1)
    }
}
