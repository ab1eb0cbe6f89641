import Primitives

extension ProfileBuilder {
    /// The profile as JSON5 text, one top-level setting a line.
    public var json5: String {
        var fields = [
            "name: \(json5String(name))",
            "seed: \(seed)",
            "target: \(target.json5)",
            "catalog: \(catalog)",
            "population: \(population)",
            "actionMix: \(object(actionMix.sorted { $0.key < $1.key }.map { "\($0.key): \(json5Number($0.value))" }))",
            "schedule: [\(schedule.map(\.json5).joined(separator: ", "))]",
        ]
        if !faults.isEmpty {
            fields.append("faults: \(object(faults.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }))")
        }
        if let settleSeconds { fields.append("settleSeconds: \(json5Number(settleSeconds))") }
        if let settleMaxSeconds { fields.append("settleMaxSeconds: \(json5Number(settleMaxSeconds))") }
        if !thresholds.isEmpty {
            fields.append("thresholds: [\(thresholds.map(json5String).joined(separator: ", "))]")
        }
        fields += extra
        return "{\n  " + fields.joined(separator: ",\n  ") + "\n}\n"
    }

    private var catalog: String {
        var fields: [String] = []
        if !groups.isEmpty {
            fields.append("groups: [\(groups.map { "{ id: \(json5String($0)) }" }.joined(separator: ", "))]")
        }
        fields.append("products: [\(products.map(\.json5).joined(separator: ", "))]")
        return object(fields)
    }

    private var population: String {
        object(["accounts: \(accounts)"] + (devicesPerAccount.map { ["devicesPerAccount: \($0)"] } ?? []))
    }
}

extension ProfileBuilder.Target {
    /// The target as a JSON5 object.
    public var json5: String {
        var fields: [String] = []
        if embeddedLedger { fields.append("embeddedLedger: true") }
        if let webhookURL { fields.append("webhookURL: \(json5String(webhookURL))") }
        if let deviceURL { fields.append("deviceURL: \(json5String(deviceURL))") }
        if let probeURL {
            let interval = probeIntervalSeconds.map { ", intervalSeconds: \(json5Number($0))" } ?? ""
            fields.append(#"probe: { kind: "http", url: \#(json5String(probeURL))\#(interval) }"#)
        }
        if let bundleId { fields.append("bundleId: \(json5String(bundleId))") }
        if let environment { fields.append("environment: \(json5String(environment))") }
        if let requestTimeoutSeconds { fields.append("requestTimeoutSeconds: \(json5Number(requestTimeoutSeconds))") }
        return object(fields + extra)
    }
}

extension ProfileBuilder.Product {
    /// The product as a JSON5 object.
    public var json5: String {
        var fields = ["id: \(json5String(id))", "type: \(json5String(type))"]
        if let group { fields.append("group: \(json5String(group))") }
        if let level { fields.append("level: \(level)") }
        fields.append("priceMilli: \(priceMilli)")
        if let periodSeconds { fields.append("periodSeconds: \(json5Number(periodSeconds))") }
        return object(fields)
    }
}

/// `fields` as a one-line JSON5 object.
private func object(_ fields: [String]) -> String {
    fields.isEmpty ? "{}" : "{ " + fields.joined(separator: ", ") + " }"
}

/// `text` as a JSON5 string literal.
func json5String(_ text: String) -> String {
    "\"" + JSONEscaping.escaped(text) + "\""
}
