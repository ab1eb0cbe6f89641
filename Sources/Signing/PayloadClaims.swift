internal import Foundation
internal import Primitives

/// Reads the claims of a payload whose top level is plain, without a JSON decode: the first
/// token is `{`, every top-level key is ASCII without escapes, no JWT claim (`exp`, `nbf`,
/// `iat`, `aud`, `sub`, `jti`) nor `receiptCreationDate` is present, and `signedDate` is absent
/// or present once as an integer literal of at most 18 digits. Anything else gives nil, and the
/// caller decodes `ClaimsProbe`, so the result is the probe's on every payload that decodes;
/// what the scan makes of invalid JSON never counts, as the decoder then rejects the payload.
enum PlainClaims {
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> ClaimsProbe? {
        var scanner = Scanner(scanner: JSONScanner(bytes))
        return scanner.claims()
    }

    private struct Scanner {
        var scanner: JSONScanner

        mutating func claims() -> ClaimsProbe? {
            scanner.skipWhitespace()
            guard scanner.consume(UInt8(ascii: "{")) else { return nil }
            scanner.skipWhitespace()
            if scanner.consume(UInt8(ascii: "}")) { return ClaimsProbe(signedDate: nil) }
            var signedDate: Int64?
            while true {
                guard scanner.consume(UInt8(ascii: "\"")), let key = scanner.plainStringRest() else { return nil }
                scanner.skipWhitespace()
                guard scanner.consume(UInt8(ascii: ":")) else { return nil }
                scanner.skipWhitespace()
                switch Self.kind(of: key) {
                case .signedDate:
                    guard signedDate == nil, let value = scanner.plainInteger() else { return nil }
                    signedDate = value
                case .claim: return nil
                case .other: guard skipValue() else { return nil }
                }
                scanner.skipWhitespace()
                if scanner.consume(UInt8(ascii: "}")) { return ClaimsProbe(signedDate: signedDate) }
                guard scanner.consume(UInt8(ascii: ",")) else { return nil }
                scanner.skipWhitespace()
            }
        }

        private enum Key { case signedDate, claim, other }

        private static func kind(of key: UnsafeBufferPointer<UInt8>) -> Key {
            // By length first: most keys have none of these lengths, and a generic `elementsEqual` per name
            // cost more than the rest of the scan.
            func equals(_ name: StaticString) -> Bool {
                memcmp(key.baseAddress!, name.utf8Start, key.count) == 0
            }
            switch key.count {
            case 10: return equals("signedDate") ? .signedDate : .other
            case 3:
                let claim = equals("exp") || equals("nbf") || equals("iat") || equals("aud") || equals("sub")
                return claim || equals("jti") ? .claim : .other
            case 19: return equals("receiptCreationDate") ? .claim : .other
            default: return .other
            }
        }

        /// Skips one value of any kind; false when the bytes end first.
        private mutating func skipValue() -> Bool {
            let bytes = scanner.bytes
            guard !scanner.isAtEnd else { return false }
            switch bytes[scanner.index] {
            case UInt8(ascii: "\""):
                scanner.index += 1
                return skipStringRest()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while !scanner.isAtEnd {
                    switch bytes[scanner.index] {
                    case UInt8(ascii: "\""):
                        scanner.index += 1
                        guard skipStringRest() else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 {
                            scanner.index += 1
                            return true
                        }
                    default: break
                    }
                    scanner.index += 1
                }
                return false
            default:
                // A number, true, false or null: up to the next delimiter.
                while !scanner.isAtEnd {
                    if scanner.isAtValueEnd { return true }
                    scanner.index += 1
                }
                return false
            }
        }

        /// Skips a string's characters and closing quote (the opening quote is consumed).
        private mutating func skipStringRest() -> Bool {
            let bytes = scanner.bytes
            let start = scanner.index
            while !scanner.isAtEnd {
                let index = scanner.index
                guard let found = memchr(bytes.baseAddress! + index, Int32(UInt8(ascii: "\"")), bytes.count - index)
                else { return false }
                let quote = bytes.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
                var backslashes = 0
                while quote - backslashes - 1 >= start, bytes[quote - backslashes - 1] == UInt8(ascii: "\\") {
                    backslashes += 1
                }
                scanner.index = quote + 1
                if backslashes % 2 == 0 { return true }
            }
            return false
        }
    }
}

/// A JSON value read the way Python's `int()` reads it (numbers, numeric strings, booleans).
struct LooseNumber: Decodable {
    var integer: Int64?
    var isNull = false

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            isNull = true
        } else if let value = try? container.decode(Int64.self) {
            integer = value
        } else if let value = try? container.decode(Double.self) {
            integer = value.isFinite && abs(value) < 9e18 ? Int64(value) : nil
        } else if let value = try? container.decode(Bool.self) {
            integer = value ? 1 : 0
        } else if let value = try? container.decode(String.self) {
            integer = Int64(value.trimmingCharacters(in: .whitespaces))
        }
    }
}

/// Any JSON value, reduced to what PyJWT's checks need: present, truthy, a string.
struct LooseValue: Decodable {
    var isTruthy: Bool
    var isString: Bool

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        isString = false
        if container.decodeNil() {
            isTruthy = false
        } else if let value = try? container.decode(String.self) {
            (isTruthy, isString) = (!value.isEmpty, true)
        } else if let value = try? container.decode(Bool.self) {
            isTruthy = value
        } else if let value = try? container.decode(Double.self) {
            isTruthy = value != 0
        } else if let value = try? container.decode([LooseValue].self) {
            isTruthy = !value.isEmpty
        } else if let value = try? container.decode([String: LooseValue].self) {
            isTruthy = !value.isEmpty
        } else {
            isTruthy = true
        }
    }
}

/// The payload fields the verifier reads before the model: the effective date and JWT claims.
struct ClaimsProbe: Decodable {
    var signedDate: LooseNumber?
    var receiptCreationDate: LooseNumber?
    var exp: LooseNumber?
    var nbf: LooseNumber?
    var iat: LooseNumber?
    var aud: LooseValue?
    var sub: LooseValue?
    var jti: LooseValue?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        func number(_ key: Keys) -> LooseNumber? {
            guard let value = try? container.decode(LooseNumber.self, forKey: key), !value.isNull else { return nil }
            return value
        }
        signedDate = number(.signedDate)
        receiptCreationDate = number(.receiptCreationDate)
        // The JWT claims count even when null: PyJWT checks `"exp" in payload`, then int(None) fails.
        exp = container.contains(.exp) ? (try? container.decode(LooseNumber.self, forKey: .exp)) ?? LooseNumber() : nil
        nbf = container.contains(.nbf) ? (try? container.decode(LooseNumber.self, forKey: .nbf)) ?? LooseNumber() : nil
        iat = container.contains(.iat) ? (try? container.decode(LooseNumber.self, forKey: .iat)) ?? LooseNumber() : nil
        aud = try? container.decode(LooseValue.self, forKey: .aud)
        sub = container.contains(.sub) ? try? container.decode(LooseValue.self, forKey: .sub) : nil
        jti = container.contains(.jti) ? try? container.decode(LooseValue.self, forKey: .jti) : nil
    }

    private enum Keys: String, CodingKey {
        case signedDate, receiptCreationDate, exp, nbf, iat, aud, sub, jti
    }

    /// PyJWT's registered-claim checks with no leeway, no audience, issuer or subject configured.
    func registeredClaimProblem(now: Double) -> String? {
        if let iat {
            guard let value = iat.integer else { return "iat is not an integer" }
            if Double(value) > now { return "iat is in the future" }
        }
        if let nbf {
            guard let value = nbf.integer else { return "nbf is not an integer" }
            if Double(value) > now { return "nbf is in the future" }
        }
        if let exp {
            guard let value = exp.integer else { return "exp is not an integer" }
            if Double(value) <= now { return "exp has passed" }
        }
        if let aud, aud.isTruthy { return "aud is present but no audience is expected" }
        if let sub, !sub.isString { return "sub is not a string" }
        if let jti, !jti.isString { return "jti is not a string" }
        return nil
    }
}

extension LooseNumber {
    init() {
        integer = nil
        isNull = true
    }
}

extension ClaimsProbe {
    /// The claims of a plain payload: at most `signedDate`.
    init(signedDate: Int64?) {
        self.signedDate = signedDate.map { value in
            var number = LooseNumber()
            (number.integer, number.isNull) = (value, false)
            return number
        }
    }
}
