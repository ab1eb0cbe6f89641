/// PayStorm's version, defined once: `paystorm --version` prints it and every report carries it.
public enum PayStormVersion {
    /// The current version.
    public static let current = "0.1.0"
}
