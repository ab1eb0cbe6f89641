import Foundation
import PayStormTestKit

@testable import Signing

/// A PKI generated once per test process (key generation is the slow part).
let sharedPKI: TestPKI = {
    do { return try TestPKI.generate() } catch { fatalError("cannot generate the test PKI: \(error)") }
}()

/// Whether Python with Apple's app-store-server-library is installed here.
let pythonLibraryAvailable: Bool = {
    guard let python = findExecutable("python3") else { return false }
    return (try? runProcess(python, ["-c", "import appstoreserverlibrary"]))?.0 == 0
}()
