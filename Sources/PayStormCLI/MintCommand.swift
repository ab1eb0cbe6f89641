import AppStoreModel
import Foundation
import Minting
import PayStorm
import RunControl
import Signing

extension Command {
    /// `paystorm mint`: one signed notification, transaction or renewal info on standard output.
    static let mint = Command(
        name: "mint",
        summary: "mint a signed notification, transaction or renewal info",
        help: MintCommand.help
    ) { arguments in
        print(try MintCommand.output(arguments))
        return .success
    }
}

/// The parsing and minting behind `paystorm mint`, apart from printing so that tests can call it.
enum MintCommand {
    static let help: String = {
        var text = """
            paystorm mint: mint App Store signed data with a PayStorm test PKI

            Usage:
              paystorm mint --pki DIR --type TYPE [--subtype SUBTYPE] [OPTIONS]
              paystorm mint --pki DIR --transaction [--type TYPE [--subtype SUBTYPE]] [OPTIONS]
              paystorm mint --pki DIR --renewal-info [--type TYPE [--subtype SUBTYPE]] [OPTIONS]
              paystorm mint receipt --pki DIR [RECEIPT OPTIONS]   (an app receipt; below)

            A notification is printed as the webhook body {"signedPayload":"..."}, so that
              paystorm mint --pki pki --type DID_RENEW |
                curl -H 'Content-Type: application/json' --data-binary @- http://127.0.0.1:8080/notifications
            works; a transaction or renewal info is printed as the bare JWS. Nested JWS (signedTransactionInfo,
            signedRenewalInfo, signedAppTransactionInfo) describe the same purchase as the notification.

            Options:
              --pki DIR              the PKI written by 'paystorm pki init DIR' (required)
              --type TYPE            notificationType; TYPE/SUBTYPE also works
              --subtype SUBTYPE      subtype (omit for none)
              --transaction          mint a bare signed transaction (shaped by --type if given)
              --renewal-info         mint a bare signed renewal info (shaped by --type if given)
              --product ID           productId (default com.example.paystorm.monthly)
              --product-type TYPE    Auto-Renewable Subscription | Non-Consumable | Consumable |
                                     Non-Renewing Subscription (or auto-renewable, non-consumable,
                                     consumable, non-renewing); default: what the type implies
              --account-token UUID   appAccountToken (must be a UUID)
              --environment ENV      Sandbox (default) | Production | Xcode | LocalTesting
              --bundle-id ID         bundleId (default com.example.paystorm)
              --app-apple-id N       appAppleId (default 1234567890)
              --signed-date MS       signedDate in UNIX milliseconds (default now)
              --notification-uuid U  notificationUUID (default a fresh one; reuse one to mint a retry)
              --transaction-id N     transactionId (decimal digits; default a fresh one), e.g. to mint the
                                     refund of a purchase the backend already has
              --original-transaction-id N
                                     originalTransactionId (decimal digits; default: the transaction's own
                                     ID for a first purchase, a fresh one for a renewal)
              --forge NAME           a forged variant (below)
              --jws                  print a notification's signedPayload instead of the webhook body
              --allow-unknown-type   mint a TYPE/SUBTYPE pair outside the matrix (as a subscription event)

            Notification types and subtypes (reference §5):

            """
        for kind in NotificationMatrix.all {
            text += "  \(kind)\n"
        }
        text += "\nForgeries (--forge) and the status Apple's SignedDataVerifier answers:\n"
        let width = Forgery.allCases.map(\.rawValue.count).max() ?? 0
        for forgery in Forgery.allCases {
            let pad = String(repeating: " ", count: width - forgery.rawValue.count)
            text += "  \(forgery.rawValue)\(pad)  \(forgery.summary) (\(forgery.expectedStatus(for: .notification)))\n"
        }
        text += """

            Exit codes: 0 minted; 64 bad option (unknown type, subtype, forgery, product type, invalid UUID or
            transaction ID); 65 malformed PKI (also a certificate its issuer did not sign); 66 missing or
            unreadable PKI; 70 internal error.

            """
        text += MintReceipt.help
        return text
    }()

    /// Parses the arguments, mints, and returns what to print.
    /// - Throws: `CLIError` with the documented exit code.
    static func output(_ arguments: Arguments) throws -> String {
        if arguments.first == "receipt" {
            var rest = arguments
            _ = rest.positional()
            return try MintReceipt.output(rest)
        }
        let options = try MintOptions(arguments)
        let pki = try loadPKI(options.pkiDirectory)
        let minter = Minter(pki: pki, app: options.app)
        do {
            switch options.shape {
            case .transaction:
                return try minter.transaction(
                    options.transaction(options.productType),
                    kind: options.kind,
                    signedDate: options.signedDate,
                    forgery: options.forgery
                )
                .jws
            case .renewalInfo:
                return try minter.renewalInfo(
                    options.transaction(.autoRenewableSubscription),
                    kind: options.kind,
                    signedDate: options.signedDate,
                    forgery: options.forgery
                )
                .jws
            case .notification(let kind):
                let minted = try minter.notification(
                    kind,
                    transaction: options.transaction(options.productType),
                    signedDate: options.signedDate,
                    notificationUUID: options.notificationUUID,
                    forgery: options.forgery
                )
                return options.printJWS ? minted.signedPayload : String(decoding: minted.body, as: UTF8.self)
            }
        } catch let error as MintError {
            throw CLIError(.usage, error.message)
        }
    }

    /// The notification kind named by `--type`/`--subtype`, or `nil` when neither is given.
    static func parseKind(type: String?, subtype: String?, allowUnknown: Bool) throws -> NotificationKind? {
        guard var typeName = type else {
            if let subtype { throw CLIError(.usage, "--subtype \(subtype) needs --type") }
            return nil
        }
        var subtypeName = subtype
        if let slash = typeName.firstIndex(of: "/") {
            if subtypeName != nil {
                throw CLIError(.usage, "give the subtype either in --type TYPE/SUBTYPE or in --subtype")
            }
            subtypeName = String(typeName[typeName.index(after: slash)...])
            typeName = String(typeName[..<slash])
        }
        if subtypeName?.isEmpty == true { subtypeName = nil }
        let notificationType = NotificationTypeV2(rawValue: typeName)
        let subtypeValue = subtypeName.map(Subtype.init(rawValue:))
        if let row = NotificationMatrix.kind(notificationType, subtypeValue) { return row }
        let hint = " (add --allow-unknown-type to mint it anyway)"
        if allowUnknown {
            // Keep the shape Apple uses for the type if it is known, otherwise a subscription event.
            let content =
                NotificationMatrix.all.first { $0.notificationType == notificationType }?.content ?? .subscription
            return NotificationKind(notificationType, subtypeValue, content)
        }
        guard notificationType.isKnown else {
            throw CLIError(.usage, "unknown notification type '\(typeName)'; see 'paystorm mint --help'" + hint)
        }
        let valid = NotificationMatrix.all.filter { $0.notificationType == notificationType }
            .map { $0.subtype?.rawValue ?? "(none)" }.joined(separator: ", ")
        if let subtypeName, !Subtype(rawValue: subtypeName).isKnown {
            throw CLIError(.usage, "unknown subtype '\(subtypeName)'; \(typeName) takes: \(valid)" + hint)
        }
        throw CLIError(.usage, "\(typeName) has no subtype '\(subtypeName ?? "(none)")'; it takes: \(valid)" + hint)
    }

    /// A product type from its exact name or a short alias.
    static func parseProductType(_ text: String) throws -> ProductType {
        let aliases: [String: ProductType] = [
            "auto-renewable": .autoRenewableSubscription, "subscription": .autoRenewableSubscription,
            "non-consumable": .nonConsumable, "consumable": .consumable, "non-renewing": .nonRenewingSubscription,
        ]
        if let exact = ProductType.allKnown.first(where: { $0.rawValue == text }) { return exact }
        if let alias = aliases[text.lowercased()] { return alias }
        let known = ProductType.allKnown.map { "'\($0.rawValue)'" }.joined(separator: ", ")
        throw CLIError(.usage, "unknown product type '\(text)' (known: \(known), or auto-renewable, consumable...)")
    }

    /// Loads a PKI directory, mapping its errors to exit codes: 66 missing or unreadable, 65 malformed.
    static func loadPKI(_ directory: String) throws -> TestPKI {
        do {
            return try TestPKI.load(from: directory)
        } catch let error as PKIError {
            throw CLIError(error.kind == .malformed ? .badInput : .noInput, error.message)
        } catch {
            throw CLIError(.noInput, "cannot load the PKI in \(directory): \(error)")
        }
    }
}
