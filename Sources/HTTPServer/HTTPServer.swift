/// The HTTPServer module: a small libmicrohttpd server used by the reference ledger, the OCSP responder and test servers.
public enum HTTPServerModule {}
