package import Chaos
package import Load
package import Profile
package import RunControl
package import TargetProcesses

/// What a request hook sees of a delivery's request, and the request its answer makes: the run and
/// `paystorm target check` both go through here.
extension Endpoints {
    /// The line a request hook gets for `request`, the request of `delivery` in `role`: its parts as rendered,
    /// the account's token and provisioned fields, the transaction's ids and product.
    package func hookRequest(
        for delivery: PlannedDelivery,
        request: LoadRequest,
        role: RequestRole
    ) -> RequestHookRequest {
        let values = values(for: delivery)
        var account = values.account
        account["appAccountToken"] = values.appAccountToken
        if account["id"] == nil { account["id"] = values.appAccountToken }
        let hasTransaction = !values.transactionId.isEmpty || !values.productId.isEmpty
        return RequestHookRequest(
            id: request.id,
            role: role.rawValue,
            kind: request.kind,
            method: request.method,
            url: request.url,
            headers: request.headers,
            body: request.body,
            account: account,
            transaction: hasTransaction
                ? RequestHookRequest.Transaction(
                    id: values.transactionId,
                    originalId: values.originalTransactionId,
                    productId: values.productId
                ) : nil
        )
    }

    /// `request` with the parts the hook answered: method, URL, headers and body (a cut the network fault
    /// planned keeps cutting the new body halfway).
    package static func request(_ request: LoadRequest, answered: RequestHookRequest) -> LoadRequest {
        var out = request
        out.method = answered.method
        out.url = answered.url
        out.headers = answered.headers
        out.body = answered.body
        if out.resetAfterBytes != nil { out.resetAfterBytes = answered.body.count / 2 }
        return out
    }

    /// `request` as `profile`'s request hook answers it when the delivery's role goes through the hook, one
    /// request at a time (`paystorm target check`); unchanged otherwise (no hook, or not its role).
    /// - Throws: `RunError.unreachable` naming the hook and what it did instead of answering.
    package func hooked(
        _ request: LoadRequest,
        for delivery: PlannedDelivery,
        through hook: RequestHookProcess?,
        _ profile: Profile
    ) throws(RunError) -> LoadRequest {
        guard let hook, let config = profile.target.requestHook, let role = Self.role(of: delivery),
            config.roles.contains(role)
        else { return request }
        do {
            let line = hookRequest(for: delivery, request: request, role: role)
            return Self.request(request, answered: try hook.answer(line, timeout: config.timeoutSeconds))
        } catch {
            throw .unreachable("the request hook (\(hook.label)) \(error)")
        }
    }
}
