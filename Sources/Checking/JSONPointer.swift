import Foundation

/// RFC 6901 JSON pointers over `JSONSerialization` trees.
public enum JSONPointer {
    /// The value at `pointer` (`""` is the whole document), or nil.
    public static func resolve(_ pointer: String, in root: Any) -> Any? {
        guard !pointer.isEmpty else { return root }
        guard pointer.hasPrefix("/") else { return nil }
        var current: Any = root
        for raw in pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            let token = raw.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            if let object = current as? [String: Any] {
                guard let next = object[token] else { return nil }
                current = next
            } else if let array = current as? [Any] {
                guard let index = Int(token), index >= 0, index < array.count else { return nil }
                current = array[index]
            } else {
                return nil
            }
        }
        return current is NSNull ? nil : current
    }
}
