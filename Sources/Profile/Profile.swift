/// The Profile module: JSON5 run profiles, strictly validated.
public enum ProfileModule {}
