public import Primitives

/// The identities a run mints: account tokens, transaction, web order and app transaction IDs, and the UUIDs of
/// notifications and summaries. They derive from the seed and `Profile.namespace`; what happens in the run
/// derives from the seed alone, so the same seed in another namespace plays the same run under other names.
///
/// Namespace 0 is the seed's own identities, as every run had before namespaces: the embedded ledger starts
/// empty each run, so its runs keep them and their reports replay byte for byte.
public struct Identities: Sendable, Hashable {
    /// The namespace (0: the seed's own identities).
    public let namespace: UInt64
    /// What identities derive from: the seed in namespace 0, else the seed mixed with the namespace.
    public let seed: UInt64
    /// XOR'd into each UUID drawn, so a namespace renames it without drawing more (0 in namespace 0).
    private let uuidMask: UInt64
    /// The first ID of the range of transaction IDs, less one: a billion IDs of the run's own.
    public let transactionBase: UInt64
    /// The first ID of the range of IDs that forgeries make up (IDs the App Store never issued).
    public let forgedTransactionBase: UInt64
    /// The tokens the backend dictated through provisioning, by account index: those accounts' purchases carry
    /// them instead of the minted ones (``Profile/dictatedTokens``).
    public var dictatedTokens: [Int: String] = [:]

    /// The identities of a seed in a namespace.
    public init(seed: UInt64, namespace: UInt64) {
        self.namespace = namespace
        guard namespace != 0 else {
            self.seed = seed
            uuidMask = 0
            transactionBase = 1_000_000_000_000_000 + (SplitMix64.mix(seed) % 900_000) * 1_000_000_000
            forgedTransactionBase = 9_000_000_000_000_000
            return
        }
        let identity = SplitMix64.mix(seed ^ SplitMix64.mix(namespace ^ 0x1DE7_0000_5A17_0000))
        self.seed = identity
        uuidMask = SplitMix64.mix(identity ^ 0x0000_0000_0A1D_0000)
        // One of 7.9 billion ranges of a billion IDs, all below the forged ones and below 2⁶³ (a backend's signed
        // 64-bit column holds them): the nightly runs of a year meet in one range about once in 10⁵ years.
        transactionBase = 1_000_000_000_000_000 + (SplitMix64.mix(identity) % 7_900_000_000) * 1_000_000_000
        forgedTransactionBase = 9_000_000_000_000_000 + (SplitMix64.mix(identity ^ 0xF0) % 200_000) * 1_000_000_000
    }

    /// A UUID from two draws of `rng`, renamed by the namespace: the draws, and so the rest of the run, are the
    /// same in every namespace.
    public func uuid(_ rng: inout SplitMix64) -> String {
        let high = rng.next()
        let low = rng.next()
        return SplitMix64.uuid(high ^ uuidMask, low ^ SplitMix64.mix(uuidMask))
    }

    /// The `appAccountToken` of an account: the one the backend dictated, else the minted one.
    public func accountToken(_ account: Int) -> String {
        dictatedTokens[account] ?? mintedToken(account)
    }

    /// The `appAccountToken` PayStorm mints for an account, without storage: what provisioning is given, and
    /// what a replay's `--account` names, whatever the backend dictated.
    public func mintedToken(_ account: Int) -> String {
        let a = SplitMix64.mix(seed ^ 0x5EED_0F0A_CC00_0000 ^ UInt64(account))
        return SplitMix64.uuid(a, SplitMix64.mix(a ^ UInt64(account)))
    }
}

extension Profile {
    /// The identities of this profile's seed in its namespace, with the tokens the backend dictated.
    public var identities: Identities {
        var identities = Identities(seed: seed, namespace: namespace)
        identities.dictatedTokens = dictatedTokens
        return identities
    }

    /// The minted token of each account whose token the backend dictated, keyed by the dictated one in
    /// ``AccountDirectory/normalized(_:)`` form: a replay names such an account by its minted token, which its
    /// provisioning is given again.
    public var mintedTokensByDictated: [String: String] {
        let identities = Identities(seed: seed, namespace: namespace)
        var minted: [String: String] = [:]
        for (account, token) in dictatedTokens {
            minted[AccountDirectory.normalized(token)] = identities.mintedToken(account)
        }
        return minted
    }
}
