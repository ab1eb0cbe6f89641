internal import Foundation
import Synchronization

#if canImport(Glibc)
internal import Glibc
#endif

/// An exclusive `flock` on the database file, held while a ledger has it open, so that a second ledger on
/// the same file is refused instead of interleaving its grants with the first one's.
///
/// The lock is on the database file itself, so a report's folder holds no lock file. Closing any
/// descriptor of a file drops the POSIX locks SQLite holds on it in this process, so the descriptor stays
/// open until SQLite has closed its connections (`release()` comes last in `LedgerStore.close()`).
final class DatabaseLock: Sendable {
    private let descriptor: Mutex<Int32?>

    /// Opens the file for writing (creating it) and locks it.
    /// - Throws: `LedgerError` (`databaseNotWritable` or `databaseInUse`) naming the path.
    init(path: String) throws {
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard opened >= 0 else {
            throw LedgerError(
                .databaseNotWritable,
                message: "database \(path) cannot be opened for writing: \(String(cString: strerror(errno)))"
            )
        }
        guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            Glibc.close(opened)
            if code == EWOULDBLOCK {
                throw LedgerError(.databaseInUse, message: "database \(path) is in use by another ledger")
            }
            throw LedgerError(
                .databaseNotWritable,
                message: "database \(path) cannot be locked: \(String(cString: strerror(code)))"
            )
        }
        descriptor = Mutex(opened)
    }

    /// Unlocks and closes the file; safe to call twice.
    func release() {
        guard let opened = descriptor.withLock({ $0.take() }) else { return }
        Glibc.close(opened)
    }

    deinit {
        release()
    }
}
