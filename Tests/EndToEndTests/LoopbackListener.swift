import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A listening TCP socket on 127.0.0.1 with a port the kernel chose, for the test servers of this target.
/// - Returns: the socket and its port.
/// - Throws: when the socket cannot be bound or listened on.
func loopbackListener() throws -> (socket: Int32, port: UInt16) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(listener, $0, length) == 0 && listen(listener, 512) == 0 && getsockname(listener, $0, &length) == 0
        }
    }
    guard ok else {
        close(listener)
        throw CocoaError(.fileWriteUnknown)
    }
    return (listener, UInt16(bigEndian: address.sin_port))
}
