import Primitives
public import Profile

/// The seeded, deterministic App Store and its devices: a lazy, time-ordered stream of ``Action``s.
///
/// Memory grows with the number of accounts (a few dozen bytes each, more for active subscriptions) and with
/// the events in flight, never with the number of actions already produced, so a run of 1,000,000 accounts
/// and 10,000,000 actions streams in constant memory per account.
///
/// Time is real time with compressed periods: an action's ``Action/at`` is seconds since the run started,
/// and every minted date is `startMillis + at`, so the target's clock agrees with the payloads.
///
/// ```swift
/// var world = World(profile: profile, startMillis: Int64(Date().timeIntervalSince1970 * 1000))
/// while let action = world.next() { send(action) }
/// ```
///
/// The world is written by concern: arrivals and scheduling here, purchases and device reports, Family
/// Sharing, subscriptions, refunds and reversals, and the payload facts, each in its own file. What happens
/// next to a subscription, a one-time purchase, an Ask to Buy request or a shared subscription is decided by
/// a value state machine (`SubscriptionLifecycle`, `OneTimePurchase`, `AskToBuy`, `FamilyShare`); the world
/// keeps the clock, the random generator and the numbering, and carries out the effects they return.
public struct World: Sequence, IteratorProtocol, Sendable {
    /// The profile the world was made from.
    public let profile: Profile
    /// Wall-clock milliseconds at the start of the run (t = 0).
    public let startMillis: Int64

    var rng: SplitMix64
    var accounts: [SimulatedAccount]
    private var queue = Heap<TimedEntry<Job>>()
    private var arrivals: ArrivalTimes
    private var nextArrival: Double
    /// Which arrivals become actions (nil: all of them).
    private let admission: ArrivalAdmission?
    private var order: UInt64 = 0
    private var emitted: UInt64 = 0
    /// Actions scheduled so far, due now or later, by arrivals as they arrive and by the jobs that follow (renewals,
    /// refunds decided later): told to the admission, which a share changes the first of only.
    private var arrivalEmits: UInt64 = 0
    private var followUpEmits: UInt64 = 0
    private var arriving = false
    private var events: UInt64 = 0
    private var transactions: UInt64 = 0
    private var webOrders: UInt64 = 0
    /// The run's identities: its seed's, in its namespace.
    let identities: Identities
    private let duration: Double
    let products: [Product]
    /// The catalog indices of each group's products, from the highest level down.
    let groupProducts: [[Int]]
    /// What each group's products bring to its subscriptions' lifecycle, in the order of ``groupProducts``.
    let groupLevels: [[SubscriptionLifecycle.Level]]

    /// Creates the world of a profile.
    /// - Parameters:
    ///   - profile: the validated profile (its seed seeds the generator).
    ///   - startMillis: wall-clock milliseconds of t = 0; pass a fixed value to reproduce a stream exactly.
    ///   - admission: which of the schedule's arrivals become actions (a run thins them when it cannot keep up);
    ///     nil admits every one.
    public init(profile: Profile, startMillis: Int64, admission: ArrivalAdmission? = nil) {
        self.profile = profile
        self.startMillis = startMillis
        self.admission = admission
        rng = SplitMix64(seed: profile.seed)
        accounts = Array(repeating: SimulatedAccount(), count: profile.population.accounts)
        duration = profile.durationSeconds
        arrivals = ArrivalTimes(profile.schedule)
        nextArrival = arrivals.next() ?? .infinity
        let products = profile.catalog.products
        self.products = products
        groupProducts = profile.catalog.groups.map { group in
            products.indices.filter { products[$0].type == .autoRenewable && products[$0].group == group.id }
                .sorted { products[$0].level < products[$1].level }
        }
        groupLevels = groupProducts.map { indices in
            indices.map { index in
                SubscriptionLifecycle.Level(
                    periodMillis: Int64(products[index].periodSeconds * 1000),
                    offerPeriods: products[index].offers.map { Int8($0.periods) }
                )
            }
        }
        identities = profile.identities
    }

    /// The `appAccountToken` of an account: a UUID derived from the seed, the namespace of the run's identities
    /// (`Profile.namespace`) and the index, without storage.
    public static func appAccountToken(seed: UInt64, namespace: UInt64 = 0, account: Int) -> String {
        Identities(seed: seed, namespace: namespace).accountToken(account)
    }

    /// The index of the account whose token is `token` (any case) among the first `accounts` of a seed and
    /// namespace, if there is one. Searches linearly: for replay and tests.
    public static func account(
        of token: String,
        seed: UInt64,
        namespace: UInt64 = 0,
        accounts: Int
    ) -> Int? {
        let (wanted, identities) = (token.uppercased(), Identities(seed: seed, namespace: namespace))
        return (0..<accounts).first { identities.accountToken($0) == wanted }
    }

    /// The account index of a token of this world (a dictated one too), if it is one (searches linearly; for
    /// tests and replay).
    public func account(of token: String) -> Int? {
        (0..<accounts.count).first { AccountDirectory.sameAccount(identities.accountToken($0), token) }
    }

    /// The Family Sharing partner of an account, if it shares (accounts pair as 2k and 2k+1).
    public static func familyPartner(of account: Int, seed: UInt64, population: Population) -> Int? {
        let pair = account / 2
        let partner = account ^ 1
        guard partner < population.accounts else { return nil }
        let draw = Double(SplitMix64.mix(seed ^ 0xFA41_1700 ^ UInt64(pair)) >> 11) * 0x1.0p-53
        return draw < population.familySharingFraction ? partner : nil
    }

    /// Milliseconds of wall-clock time at `t` seconds into the run.
    public func millis(_ t: Double) -> Int64 { startMillis + Int64((t * 1000).rounded()) }

    /// Seconds into the run at wall-clock milliseconds `ms`.
    func seconds(_ ms: Int64) -> Double { Double(ms - startMillis) / 1000 }

    /// The next action in time order, or nil when the schedule is over.
    public mutating func next() -> Action? {
        while true {
            let arrivalDue = nextArrival < duration
            if let top = queue.first, !arrivalDue || top.at <= nextArrival {
                let item = queue.pop()!
                if case .emit(var action) = item.payload {
                    action.sequence = emitted
                    emitted += 1
                    return action
                }
                run(item.payload, at: item.at)
                continue
            }
            guard arrivalDue else { return nil }
            let t = nextArrival
            nextArrival = arrivals.next() ?? .infinity
            // A dropped arrival draws nothing, so the world after it depends only on the admissions recorded.
            if let admission,
                !admission.admitsNext(scheduled: arrivalEmits, followUps: followUpEmits, yielded: emitted)
            {
                continue
            }
            arriving = true
            arrive(at: t)
            arriving = false
        }
    }

    // MARK: - Arrivals

    private mutating func arrive(at t: Double) {
        let account = rng.below(accounts.count)
        let mix = profile.actionMix
        if perform(ActionKind.draw(from: ActionKind.allCases, mix: mix, using: &rng), account: account, at: t) {
            return
        }
        // Not possible for this account now (nothing to cancel, already subscribed...): buy something instead.
        guard ActionKind.purchases.contains(where: { $0.weight(in: mix) > 0 }) else { return }
        _ = perform(ActionKind.draw(from: ActionKind.purchases, mix: mix, using: &rng), account: account, at: t)
    }

    /// Performs an action; false when it does not apply to the account now.
    private mutating func perform(_ kind: ActionKind, account: Int, at t: Double) -> Bool {
        switch kind {
        case .consumable, .nonConsumable, .subscribe, .nonRenewing:
            let candidates = products.indices.filter { products[$0].type == kind.productKind }
            guard !candidates.isEmpty else { return false }
            return buy(product: candidates[rng.below(candidates.count)], account: account, at: t)
        case .cancel: return changeAutoRenew(account: account, enable: false, at: t)
        case .resume: return changeAutoRenew(account: account, enable: true, at: t)
        case .upgrade: return changeLevel(account: account, upgrade: true, at: t)
        case .downgrade: return changeLevel(account: account, upgrade: false, at: t)
        case .refund: return refund(account: account, at: t, cause: nil)
        case .refundReversal: return reverseRefund(account: account, at: t)
        case .billingFailure: return armBillingFailure(account: account, at: t)
        case .offerRedemption: return redeemOffer(account: account, at: t)
        case .priceIncrease: return announcePriceIncrease(account: account, at: t)
        case .deviceReport: return report(account: account, at: t)
        case .renewalExtension: return extendRenewal(account: account, at: t)
        }
    }

    // MARK: - Scheduling

    mutating func schedule(_ job: Job, at t: Double) {
        if case .emit = job {
            if arriving { arrivalEmits += 1 } else { followUpEmits += 1 }
        } else if t >= duration {
            return
        }
        order += 1
        queue.push(TimedEntry(at: t, order: order, payload: job))
    }

    mutating func emit(
        _ lifecycle: Lifecycle,
        account: Int,
        event: UInt64,
        at t: Double,
        _ delivery: Delivery,
        _ truth: Truth,
        cause: String? = nil
    ) {
        let action = Action(
            sequence: 0,
            event: event,
            at: t,
            account: account,
            appAccountToken: token(account),
            lifecycle: lifecycle,
            delivery: delivery,
            truth: truth,
            causedBy: cause
        )
        schedule(.emit(action), at: t)
    }

    mutating func newEvent() -> UInt64 {
        events += 1
        return events
    }

    mutating func newTransaction() -> UInt64 {
        transactions += 1
        return identities.transactionBase + transactions
    }

    mutating func newWebOrder() -> UInt64 {
        webOrders += 1
        return identities.transactionBase / 1000 + webOrders
    }

    func token(_ account: Int) -> String { identities.accountToken(account) }

    /// A UUID the world mints (a notification's, a summary's request's), named in the run's namespace.
    mutating func newUUID() -> String { identities.uuid(&rng) }

    private mutating func run(_ job: Job, at t: Double) {
        switch job {
        case .emit: break
        case .subscription(let account, let group, let timer, let version):
            fire(timer, account: account, group: group, version: version, at: t)
        case .askToBuy(let account, var request):
            let effects = request.answer()
            play(effects, of: request, account: account, at: t)
        case .refund(let account):
            guard changesSettled(account: account, at: t) else {
                // A millisecond later: the account's last refund or reversal was signed in this one.
                schedule(.refund(account: account), at: t + 0.001)
                return
            }
            _ = refund(account: account, at: t, cause: "refundMidStream", latestOnly: true)
        case .refundDecision(let account, let group, let transaction, let approve):
            decideRefund(account: account, group: group, transaction: transaction, approve: approve, at: t)
        case .stopSharing(let account, let group):
            revokeFamilyShare(account: account, group: group, at: t, cause: nil, stopsSharing: true)
        }
    }
}
