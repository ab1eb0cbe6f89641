internal import AppStoreModel
import Synchronization
internal import TargetContract

// The probe side: what an account is granted, read on the reader connection.
extension LedgerStore {
    /// What the account is granted at `now` (ms).
    func account(_ token: String, now: Int64) throws -> AccountState {
        try reader.withLock { database in
            try database.transaction {
                try account(token, now: now, in: database)
            }
        }
    }

    private func account(_ token: String, now: Int64, in database: Database) throws -> AccountState {
        var state = AccountState(entitlements: [], balances: [:], grants: [])
        let grantRows = try database.query(AccountQuery.grants, [.text(token)])
        state.grants = grantRows.map {
            AccountState.Grant(transactionId: $0[0].string ?? "", count: Int($0[1].int ?? 0))
        }
        state.refunds = try database.query(AccountQuery.refunds, [.text(token)]).map {
            AccountState.Refund(transactionId: $0[0].string ?? "", count: Int($0[1].int ?? 0))
        }

        let balanceRows = try database.query(
            AccountQuery.balances,
            [.text(token), .text(ProductType.consumable.rawValue)]
        )
        for row in balanceRows {
            if let product = row[0].string { state.balances[product] = Int(row[1].int ?? 0) }
        }

        let ownedRows = try database.query(
            AccountQuery.owned,
            [
                .text(token), .text(ProductType.nonConsumable.rawValue),
                .text(ProductType.nonRenewingSubscription.rawValue),
            ]
        )
        for row in ownedRows {
            let expires = row[2].int
            if let expires, expires <= now { continue }
            state.entitlements.append(
                AccountState.Entitlement(
                    productId: row[0].string ?? "",
                    transactionId: row[1].string,
                    expiresDate: expires
                )
            )
        }

        state.entitlements += try subscriptionEntitlements(token, now: now, in: database)
        return state
    }

    /// The account's subscriptions that entitle it now: active and unexpired, or in their grace period, and not
    /// revoked.
    private func subscriptionEntitlements(
        _ token: String,
        now: Int64,
        in database: Database
    ) throws -> [AccountState.Entitlement] {
        var entitlements: [AccountState.Entitlement] = []
        let subscriptionRows = try database.query(AccountQuery.subscriptions, [.text(token)])
        for row in subscriptionRows {
            let status = Status(rawValue: Int(row[2].int ?? 0))
            let expires = row[3].int
            let grace = row[4].int
            // A revocation is the transaction's own, ordered apart from the status (a refund and its reversal
            // may both trail a newer view): a revoked current transaction ends the subscription's entitlement.
            let revoked = policy.revocationOverridesStatus && row[5].int != nil
            let entitled: Bool
            switch status {
            case .active: entitled = expires.map { $0 > now } ?? true
            case .billingGracePeriod: entitled = grace.map { $0 > now } ?? true
            default: entitled = false
            }
            if entitled && !revoked {
                entitlements.append(
                    AccountState.Entitlement(
                        productId: row[0].string ?? "",
                        transactionId: row[1].string,
                        expiresDate: status == .billingGracePeriod ? (grace ?? expires) : expires
                    )
                )
            }
        }
        return entitlements
    }

    /// Counts for `/health` and `/metrics`.
    func totals() -> (notifications: Int64, transactions: Int64, grants: Int64) {
        reader.withLock { database in
            let rows = try? database.query(
                """
                SELECT (SELECT COUNT(*) FROM notifications), (SELECT COUNT(*) FROM transactions),
                    (SELECT COUNT(*) FROM grants)
                """
            )
            let row = rows?.first ?? []
            return (row.first?.int ?? 0, row.dropFirst().first?.int ?? 0, row.dropFirst(2).first?.int ?? 0)
        }
    }
}
