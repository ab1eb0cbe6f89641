import Profile
import Simulation
import TargetContract

/// The invariants, each judged from one account's books and its probed state.
extension Checker {
    func unlockFinding(_ context: Context) -> Finding {
        for entitlement in context.observed.entitlements {
            if let id = entitlement.transactionId, let tx = context.book.txs[id], tx.forged && !tx.genuine {
                return .fail(
                    "the target entitles \(entitlement.productId) through transaction \(id), which exists only in a forged delivery",
                    context.evidence([tx], .all),
                    showing(entitlement),
                    about: .transaction(id)
                )
            }
            if !context.bought(entitlement.productId) {
                let forged = context.book.txs.values.filter { $0.product == entitlement.productId && $0.forged }
                if let pending = context.book.pending[entitlement.productId] {
                    return .fail(
                        "the target entitles \(entitlement.productId), whose only purchase was pending (Ask to Buy) or declined",
                        context.evidence(forged, .all, pending: pending),
                        showing(entitlement),
                        about: .product(entitlement.productId)
                    )
                }
                let how =
                    forged.isEmpty ? "no purchase of it was ever sent" : "only forged transactions of it were sent"
                return .fail(
                    "the target entitles \(entitlement.productId) but \(how)",
                    context.evidence(forged, .all),
                    showing(entitlement),
                    about: .product(entitlement.productId)
                )
            }
            // An entitlement through a genuine transaction is that purchase's, whatever else was sent.
            if !context.namesGenuineTransaction(entitlement),
                let source = unverifiedSource(of: entitlement.productId, context)
            {
                return .fail(
                    "the target entitles \(entitlement.productId), whose every verified purchase was refunded, and "
                        + source.reading + " (or a refund was not honored)",
                    source.evidence,
                    showing(entitlement),
                    about: .product(entitlement.productId)
                )
            }
            if let source = unverifiedSource(ofSubscription: entitlement, context) {
                return .fail(
                    "the target entitles \(entitlement.productId), though no subscription of its group is owed one, and "
                        + source.reading + " (or a refund or an expiry was not honored)",
                    source.evidence,
                    showing(entitlement),
                    about: .product(entitlement.productId)
                )
            }
        }
        for (product, balance) in context.observed.balances where balance > 0 && !context.bought(product) {
            let forged = context.book.txs.values.filter { $0.product == product && $0.forged }
            let pending = context.book.pending[product]
            return .fail(
                "the target shows a balance of \(balance) \(product) but no verified purchase of it was sent",
                context.evidence(forged, .all, pending: pending),
                "showed a balance of \(balance) \(product)",
                about: .product(product)
            )
        }
        for (product, balance) in context.observed.balances where balance > 0 && context.bought(product) {
            if let failure = creditedForgeryFinding(product, balance: balance, context) { return failure }
        }
        for grant in context.observed.grants ?? [] where grant.count > 0 {
            guard let tx = context.book.txs[grant.transactionId] else {
                if let number = UInt64(grant.transactionId), context.book.foldedIDs.contains(number) { continue }
                // Carried by a genuine notification before its own deliveries came: issued, not yet booked.
                if context.book.issuedAhead[grant.transactionId] != nil { continue }
                return .fail(
                    "the target granted transaction \(grant.transactionId), which the App Store never issued",
                    [],
                    showing(grant),
                    about: .transaction(grant.transactionId)
                )
            }
            if tx.forged && !tx.genuine {
                return .fail(
                    "the target granted transaction \(grant.transactionId), which exists only in a forged delivery",
                    context.evidence([tx], .all),
                    showing(grant),
                    about: .transaction(grant.transactionId)
                )
            }
        }
        return .pass
    }

    func doubleGrantFinding(_ context: Context) -> Finding {
        for grant in Self.grantsByTransaction(context.observed.grants ?? []) where grant.count > 1 {
            let tx = context.book.txs[grant.transactionId]
            // The decisive events: the copies the target acknowledged (each one a grant).
            return .fail(
                "the target granted transaction \(grant.transactionId) \(grant.count) times",
                context.evidence(tx.map { [$0] } ?? [], [.purchase, .acks, .recent]),
                showing(grant),
                about: .transaction(grant.transactionId)
            )
        }
        for (product, balance) in context.observed.balances where balance > 0 {
            let sent = context.genuine(product)
            guard context.bought(product) else { continue }
            let upper = context.genuineUnits(product)
            // An excess that forged units explain is filed as an unlock without a verified purchase.
            let forgedUnits = context.forgedOnly(product).reduce(0) { $0 + $1.quantity }
            if balance > upper && !(forgedUnits > 0 && balance <= upper + forgedUnits) {
                let unreached = context.unreachedUnits(product)
                let besides =
                    unreached > 0
                    ? " (\(unreached) more were sent, but every attempt was refused or never left the harness)" : ""
                return .fail(
                    "the target shows \(balance) \(product) but the distinct purchases sent add up to \(upper)"
                        + besides,
                    context.evidence(sent.map(\.1), .acks),
                    "showed a balance of \(balance) \(product)",
                    about: .product(product)
                )
            }
        }
        return .pass
    }

    /// The grants with one entry per transaction, counts summed, in the order first listed: a probe that lists
    /// a row per credit (a transform over a credits table) names a transaction credited twice twice.
    static func grantsByTransaction(_ grants: [AccountState.Grant]) -> [AccountState.Grant] {
        var merged: [AccountState.Grant] = []
        var index: [String: Int] = [:]
        for grant in grants {
            if let at = index[grant.transactionId] {
                merged[at].count += grant.count
            } else {
                index[grant.transactionId] = merged.count
                merged.append(grant)
            }
        }
        return merged
    }

    func regressionFinding(_ context: Context, book: inout AccountBook) -> Finding {
        var failure: Finding?
        var observedMax: [String: Int64] = [:]
        for entitlement in context.observed.entitlements {
            guard let group = groupOf[entitlement.productId], let expires = entitlement.expiresDate else { continue }
            observedMax[group] = max(observedMax[group] ?? .min, expires)
        }
        for (group, seen) in observedMax {
            let truth = book.longestTruth(of: group)
            // A first expiry, a longer one, or a shorter one that data since the longest explains (the target
            // took that data, and may not have the later data yet): what the target shows is the baseline.
            guard let previous = book.seenExpiry[group], seen < previous.longest, previous.shortestTruthSince > seen
            else {
                book.seenExpiry[group] = SeenExpiry(longest: seen, shortestTruthSince: truth?.expires ?? seen)
                continue
            }
            // Stale only below what the target acknowledged of the group when the probe asked: the data that
            // would lengthen the group again (an upgrade, an extension, another series' renewal) may still be on
            // its way. With nothing of the group standing acknowledged, nothing it shows is stale.
            if let truth, truth.expires >= previous.longest, truth.status != .revoked,
                let acknowledged = book.longestAcknowledged(of: group, by: context.asked, answered: context.answered),
                acknowledged > seen
            {
                // The stale delivery that set the older expiry, and the newer one it overrode.
                let stale = book.txs.values.filter { $0.group == group && $0.acked && $0.expires == seen }
                let newer = book.txs.values.filter {
                    $0.group == group && $0.acked && $0.expires == previous.longest
                }
                let txs = stale.isEmpty ? book.txs.values.filter { $0.group == group && $0.acked } : stale + newer
                failure =
                    failure
                    ?? .fail(
                        "the target moved the expiry of group \(group) back from \(previous.longest) to \(seen) ms although no newer data shortened it",
                        context.evidence(Array(txs), .acks),
                        "showed group \(group) expiring at \(seen) ms, after \(previous.longest) ms earlier",
                        about: .groupExpiry(group, seen)
                    )
            }
        }
        let entitledIDs = Set(context.observed.entitlements.compactMap(\.transactionId))
        let entitledProducts = Set(context.observed.entitlements.map(\.productId))
        // Only a refund that stood when the probe asked is one the target must show (see `refundStood`).
        for (id, tx) in book.txs where tx.genuine && context.refundStood(tx) {
            if entitledIDs.contains(id) {
                if book.gone.contains(id) {
                    failure =
                        failure
                        ?? .fail(
                            "transaction \(id) of \(tx.product) was revoked, disappeared, then came back without a refund reversal",
                            context.evidence([tx], [.refund, .acks]),
                            "showed entitlement \(tx.product) (transaction \(id)) again",
                            about: .transaction(id)
                        )
                }
            } else {
                book.gone.insert(id)
            }
            guard tx.type == .nonConsumable, !context.unrefundedPurchase(of: tx.product, besides: id) else { continue }
            let key = "product:" + tx.product
            if entitledProducts.contains(tx.product) {
                // An unverified source the target trusted explains the return too: filed as an unlock.
                if book.gone.contains(key), unverifiedSource(of: tx.product, context) == nil {
                    failure =
                        failure
                        ?? .fail(
                            "\(tx.product) was revoked, disappeared, then came back without a refund reversal",
                            context.evidence([tx], [.refund, .acks]),
                            "showed entitlement \(tx.product) again",
                            about: .product(tx.product)
                        )
                }
            } else {
                book.gone.insert(key)
            }
        }
        let folded = foldedRefundRegressionFinding(context, book: &book)
        return failure ?? folded ?? .pass
    }

    func revocationFinding(_ context: Context) -> Finding {
        if let failure = overRevocationFinding(context) { return failure }
        var undecided = Undecided()
        // The target's own books: a transaction the App Store refunded must read `revoked` there.
        for listed in context.observed.transactions ?? [] where listed.state == .granted {
            guard let tx = context.book.txs[listed.transactionId], tx.genuine, tx.revoked, tx.revocationAcked else {
                continue
            }
            return .fail(
                "the target's books still show refunded transaction \(listed.transactionId) of \(tx.product) as granted",
                context.evidence([tx], [.purchase, .refund, .acks]),
                showing(listed),
                about: .transaction(listed.transactionId)
            )
        }
        if let failure = foldedRefundRevocationFinding(context) { return failure }
        let entitledProducts = Set(context.observed.entitlements.map(\.productId))
        for (id, tx) in context.book.txs.sorted(by: { $0.value.sequence < $1.value.sequence })
        where tx.revoked && tx.genuine {
            guard tx.revocationAcked else {
                if tx.revocationIndeterminate { undecided.note("the refund of \(id) got no answer") }
                continue
            }
            if let failure = stillEntitledFinding(refunded: tx, id: id, entitled: entitledProducts, context) {
                return failure
            }
        }
        if let failure = refundNotTakenBackFinding(context, undecided: &undecided) { return failure }
        return undecided.finding
    }

    /// What the target still entitles through an acknowledged refund of `tx`: the transaction itself, its
    /// product when no other purchase explains it, or its subscription group; or an unrefunded purchase that
    /// the refund also took away.
    func stillEntitledFinding(
        refunded tx: OracleTransaction,
        id: String,
        entitled entitledProducts: Set<String>,
        _ context: Context
    )
        -> Finding?
    {
        if let entitlement = context.observed.entitlements.first(where: { $0.transactionId == id }) {
            return .fail(
                "the target still entitles \(tx.product) through refunded transaction \(id)",
                context.evidence([tx], [.purchase, .refund, .acks]),
                showing(entitlement),
                about: .transaction(id)
            )
        }
        switch tx.type {
        case .nonConsumable, .nonRenewing:
            // Another unrefunded purchase of the product, kept or folded, may be what the target entitles.
            // An unverified source the target trusted explains it too: filed as an unlock (`unverifiedSource`).
            if entitledProducts.contains(tx.product) && !context.unrefundedPurchase(of: tx.product, besides: id)
                && unverifiedSource(of: tx.product, context) == nil
            {
                let entitlement = context.observed.entitlements.first { $0.productId == tx.product }
                // A replay after the refund outweighed a pending report (see `unverifiedSource`): say both.
                let pending = context.book.pending[tx.product]
                return .fail(
                    "the target still entitles \(tx.product) although its only purchase \(id) was refunded"
                        + (pending == nil ? "" : " (or the Ask to Buy of it reported pending unlocked it)"),
                    context.evidence([tx], [.purchase, .refund, .acks], pending: pending),
                    entitlement.map(showing) ?? "showed entitlement \(tx.product)",
                    about: .transaction(id)
                )
            }
            // Revoked too much: the refund of this transaction also took away another, unrefunded one.
            if !entitledProducts.contains(tx.product), let victim = overRevoked(by: tx, context) {
                return .fail(
                    "the target revoked too much: the refund of transaction \(id) also removed unrefunded transaction \(victim.id) of \(tx.product)",
                    context.evidence([(tx, .refund), (victim, [.purchase, .acks])]),
                    "showed no entitlement to \(tx.product)",
                    about: .transaction(victim.id)
                )
            }
        case .autoRenewable:
            // Not while another transaction of the series runs by what the target acknowledged (its own refund
            // never reached the target): that one may be what it entitles.
            if let group = tx.group, let original = tx.original, let sub = context.book.subs[original],
                sub.status == .revoked, let entitlement = entitlement(ofGroup: group, series: original, context),
                unverifiedSource(ofSubscription: entitlement, context) == nil,
                !context.stillRunsAsAcknowledged(series: original)
            {
                return .fail(
                    "the target still entitles subscription group \(group) although transaction \(id) was refunded",
                    context.evidence([tx], [.purchase, .refund]),
                    showing(entitlement),
                    about: .transaction(id)
                )
            }
        case .consumable, nil:
            break
        }
        return nil
    }

    /// A consumable's balance beyond what its refunds leave, once forgeries the target may have credited are
    /// set aside: a refund not taken back.
    func refundNotTakenBackFinding(_ context: Context, undecided: inout Undecided) -> Finding? {
        for (product, balance) in context.observed.balances where typeOf[product] == .consumable {
            let refunded = context.genuine(product).filter { context.refundStood($0.1) }
            guard !refunded.isEmpty || (context.book.folded[product]?.refunded ?? 0) > 0 else { continue }
            let allowed = context.unitsNotRefunded(product)
            // Units that forged transactions the target may have credited explain are an unlock without a
            // verified purchase (filed there); only what remains beyond them proves a refund was not taken back.
            let forgedUnits = context.forgedOnly(product).reduce(0) { $0 + $1.quantity }
            // Units that the probe's grants show credited more than once are a double grant (filed there): a
            // refund taken back leaves them too. Transactions folded away may explain the rest: then undecided.
            let excess = balance - forgedUnits - context.unitsGrantedAgain(product) - allowed
            if excess > 0 && excess <= context.unitsFoldedGrantedAgain(product) {
                undecided.note("\(product) beyond its refunds may be folded transactions the target granted twice")
            } else if excess > 0 {
                let twice =
                    context.observed.grants == nil && balance <= context.genuineUnits(product)
                    ? " (or a purchase was credited twice: the probe shows no per-transaction grants)" : ""
                return .fail(
                    "the target shows \(balance) \(product) but only \(allowed) remain once refunds are taken back"
                        + twice,
                    context.evidence(refunded.map(\.1), .refund),
                    "showed a balance of \(balance) \(product)",
                    about: .product(product)
                )
            }
        }
        return nil
    }

    /// An acknowledged, unrefunded purchase of the same product that the target no longer entitles after
    /// `refunded`'s refund, if one is owed now (a non-renewing one only within its period, away from its end).
    /// Only a purchase the target acknowledged before the refund was first dispatched can have been taken by
    /// it: one bought later and missing is lost (no-lost-purchase), not revoked.
    func overRevoked(by refunded: OracleTransaction, _ context: Context) -> OracleTransaction? {
        guard let refundSent = refunded.trail.earliest(.refund) else { return nil }
        return context.book.txs.values.filter { tx in
            guard tx.id != refunded.id, tx.product == refunded.product, tx.genuine, tx.acked, !tx.revoked,
                !tx.forged, let acknowledged = tx.trail.earliest(.acks), acknowledged < refundSent
            else { return false }
            guard tx.type == .nonRenewing else { return true }
            guard let expires = tx.expires else { return false }
            return context.now + context.boundary < expires
        }.min { $0.sequence < $1.sequence }
    }

    func lostFinding(_ context: Context) -> Finding {
        var undecided = Undecided()
        let entitledProducts = Set(context.observed.entitlements.map(\.productId))
        var owed: [String: Int] = [:]
        var owedTxs: [String: [OracleTransaction]] = [:]
        for (id, tx) in context.book.txs.sorted(by: { $0.value.sequence < $1.value.sequence })
        where tx.genuine && !tx.revoked {
            if tx.neverAccepted {
                return neverAcceptedFailure(tx, context)
            }
            if tx.awaitingRetry {
                undecided.note("every attempt of purchase \(id) so far was rejected, and another is still to come")
            }
            guard tx.acked else { continue }
            switch tx.type {
            case .nonConsumable:
                if !entitledProducts.contains(tx.product) {
                    return .fail(
                        "the target acknowledged purchase \(id) of \(tx.product) but does not entitle it",
                        context.evidence([tx], [.purchase, .acks, .refund]),
                        "showed no entitlement to \(tx.product)",
                        about: .transaction(id)
                    )
                }
            case .nonRenewing:
                // Owed for its catalog period after purchase; after that the target decides when it ends. An
                // entitled product loses nothing, however near the end: only its absence is in doubt there.
                guard let expires = tx.expires, !entitledProducts.contains(tx.product) else { continue }
                if abs(context.now - expires) < context.boundary {
                    undecided.note("\(tx.product) ends within the boundary", later: true)
                } else if context.now < expires {
                    return .fail(
                        "the target acknowledged purchase \(id) of \(tx.product), owed until at least \(expires), but does not entitle it",
                        context.evidence([tx], [.purchase, .acks, .refund]),
                        "showed no entitlement to \(tx.product)",
                        about: .transaction(id)
                    )
                }
            case .consumable:
                owed[tx.product, default: 0] += tx.quantity
                owedTxs[tx.product, default: []].append(tx)
            case .autoRenewable, nil:
                break
            }
        }
        if let sample = context.book.neverAcceptedSample {
            return neverAcceptedFailure(sample, context, more: context.book.neverAccepted.count)
        } else if let number = context.book.neverAccepted.min() {
            return .fail(
                "genuine delivery never accepted: the target answered every attempt to deliver purchase \(number) with a rejection (\(context.book.neverAccepted.count) such purchases)",
                [],
                "was not needed: the target's own rejections prove it (the run's history lists them)",
                about: .transaction(String(number))
            )
        }
        for (product, folded) in context.book.folded where folded.acked > 0 {
            owed[product, default: 0] += folded.acked
        }
        for (product, lower) in owed.sorted(by: { $0.key < $1.key }) {
            let balance = context.observed.balances[product] ?? 0
            if balance < lower {
                // A refund of another purchase of the product that stood when the probe asked is the usual
                // cause (a backend that takes back by product): name it, and put it in the evidence.
                let refund = context.book.txs.values.filter { $0.product == product && context.refundStood($0) }
                    .max { $0.sequence < $1.sequence }
                let after =
                    refund.map {
                        "; it had acknowledged the refund of another purchase of \(product), transaction \($0.id), "
                            + "which takes back only that purchase's \($0.quantity)"
                    } ?? ""
                return .fail(
                    "the target shows \(balance) \(product) but acknowledged purchases of \(lower)" + after,
                    context.evidence(
                        (owedTxs[product] ?? []).map { ($0, .acks) } + (refund.map { [($0, .refund)] } ?? [])
                    ),
                    "showed a balance of \(balance) \(product)",
                    about: .product(product)
                )
            }
        }
        return undecided.finding
    }

    func neverAcceptedFailure(_ tx: OracleTransaction, _ context: Context, more: Int = 0) -> Finding {
        let others = more > 1 ? " (and \(more - 1) other purchases of this account)" : ""
        let owned =
            context.observed.entitlements.contains { $0.productId == tx.product }
            ? "showed \(tx.product) entitled, though the target rejected every delivery of this purchase"
            : (context.observed.balances[tx.product] ?? 0) > 0
                ? "showed a balance of \(context.observed.balances[tx.product] ?? 0) \(tx.product); the purchase itself was rejected every time"
                : "showed nothing granted for \(tx.product)"
        return .fail(
            "genuine delivery never accepted: the target answered all \(tx.rejected) attempts to deliver purchase \(tx.id) of \(tx.product) with a rejection (last \(tx.lastRejection))\(others)",
            context.evidence([tx], [.purchase, .rejections]),
            owned,
            about: .transaction(tx.id)
        )
    }

    /// Subscription state covers the target's per-transaction books too: a granted period whose end differs
    /// from the one Apple signed (say a refund that arrived before its renewal, so the target cancelled the
    /// previous period and stretched it over the refunded one) makes the target entitle the subscription for
    /// a time it was not bought, or not for a time it was. That is a wrong subscription state, not a stale
    /// regression: no older data overrode newer, the target computed the period wrongly from current data.
    func subscriptionFinding(_ context: Context) -> Finding {
        if let failure = revokedPeriodFinding(context) { return failure }
        var undecided = Undecided()
        for listed in context.observed.transactions ?? [] where listed.state == .granted {
            // An upgraded (superseded) period may legitimately end early; a refunded one is revocation's.
            guard let end = listed.periodEnd, let tx = context.book.txs[listed.transactionId], tx.genuine, tx.acked,
                !tx.revoked, !tx.superseded, tx.type == .autoRenewable, let truthEnd = tx.expires
            else { continue }
            if abs(end - truthEnd) > context.boundary {
                return .fail(
                    "the target's books give transaction \(listed.transactionId) of \(tx.product) a period ending at \(end), but the App Store signed \(truthEnd)",
                    context.evidence([tx], [.purchase, .acks, .refund, .recent]),
                    showing(listed),
                    about: .transaction(listed.transactionId)
                )
            }
        }
        for (original, sub) in context.book.subs where sub.status != .revoked {
            // Owed: any entitlement of the group will do. Not owed: only one this series can explain fails.
            let entitlement = entitlement(ofGroup: sub.group, series: original, context)
            let entitled = context.observed.entitlements.contains { groupOf[$0.productId] == sub.group }
            let end = sub.end
            let series = context.book.txs.values.filter { $0.original == original && $0.genuine && !$0.revoked }
            if sub.near(context.now, boundary: context.boundary) {
                undecided.note(
                    "subscription \(original) is within \(context.boundary) ms of an expiry or a change",
                    later: true
                )
                continue
            }
            let shows = entitlement.map(showing) ?? "showed no entitlement in group \(sub.group)"
            if sub.status == .billingRetry {
                guard let rule = options.billingRetryEntitled, (rule ? entitled : entitlement != nil) != rule else {
                    continue
                }
                return .fail(
                    "subscription \(original) is in billing retry, where the profile wants entitled = \(rule)",
                    context.evidence(Array(series), [.purchase, .acks]),
                    shows,
                    about: .transaction(sub.transactionId)
                )
            }
            let truthEntitled = sub.owed(at: context.now)
            // The level owed is the current transaction's: an upgrade (also by an offer) takes effect at once,
            // a downgrade only at the next renewal. Judged once the target acknowledged that transaction.
            if truthEntitled, let entitlement, entitlement.productId != sub.product,
                let current = context.book.txs[sub.transactionId], current.acked, !current.revoked
            {
                return .fail(
                    "subscription \(original) is owed \(sub.product) since transaction \(sub.transactionId), which the target acknowledged, but the target entitles \(entitlement.productId)",
                    context.evidence([current], [.purchase, .acks, .recent]),
                    showing(entitlement),
                    about: .transaction(sub.transactionId)
                )
            }
            if truthEntitled && !entitled {
                let covering = series.filter { ($0.expires ?? 0) > context.now + context.boundary }
                // Owed up to the expiry the target acknowledged: a later one may not have reached it yet. A period
                // an upgrade the target acknowledged superseded obliges it to nothing, however long it ran.
                let acknowledged = covering.filter(\.acked)
                let known = context.book.txs.values.filter {
                    $0.original == original && $0.genuine && $0.acknowledged(by: context.asked)
                }
                if acknowledged.contains(where: {
                    ($0.acknowledgedExpires ?? 0) > context.now + context.boundary && !$0.isSuperseded(among: known)
                }) {
                    return .fail(
                        "subscription \(original) (\(sub.product)) is active until \(end) and the target acknowledged it, but does not entitle it",
                        context.evidence(covering, [.purchase, .acks]),
                        shows,
                        about: .transaction(sub.transactionId)
                    )
                }
                if covering.contains(where: \.indeterminate) {
                    undecided.note("the current period of subscription \(original) got no answer")
                } else if !acknowledged.isEmpty {
                    undecided.note("the latest expiry of subscription \(original) has not reached the target")
                }
            } else if !truthEntitled, let entitlement, unverifiedSource(ofSubscription: entitlement, context) == nil {
                if context.stillRunsAsAcknowledged(series: original) {
                    // The data that ended it (a refund, a resubscription ending sooner) has not reached the target.
                    undecided.note("the end of subscription \(original) has not reached the target")
                    continue
                }
                switch expiryGrace(of: sub, context) {
                case .within: continue
                case .nearItsEnd(let reason):
                    undecided.note(reason, later: true)
                    continue
                case .outside: break
                }
                return .fail(
                    "subscription \(original) (\(sub.product)) ended at \(end) (status \(sub.status)) but the target still entitles group \(sub.group)",
                    context.evidence(Array(series), [.acks, .refund, .recent]),
                    shows,
                    about: .transaction(sub.transactionId)
                )
            }
        }
        return undecided.finding
    }
}
