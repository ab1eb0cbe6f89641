/// The Signing module. See Docs or DESIGN for its one job.
public enum SigningModule {}
