import Testing

@testable import Simulation

/// Every transition of an Ask to Buy request as one table: how it starts, an answer, the state it leads to
/// and the effects the world carries out, in order.
struct AskToBuyTests {
    typealias Effect = AskToBuy.Effect

    @Test(arguments: [
        (false, [Effect.reportPending, .awaitAnswer(seconds: 3)]),
        (true, [.reportPending, .awaitAnswer(seconds: 3), .holdOwnership]),
    ])
    func aRequestReportsPendingAndAwaitsTheAnswer(nonConsumable: Bool, effects: [Effect]) {
        let (request, made) = AskToBuy.request(
            product: 2,
            device: 1,
            approve: true,
            nonConsumable: nonConsumable,
            pendingSeconds: 3
        )
        #expect(made == effects && request.state == .pending)
    }

    @Test(arguments: [
        (true, 1, AskToBuy.State.approved, [Effect.complete]),
        (false, 1, .declined, [.markDeclined]),
        (true, 2, .approved, []),
        (false, 2, .declined, []),
    ])
    func anAnswerDecidesOnce(approve: Bool, answers: Int, state: AskToBuy.State, last: [Effect]) {
        var (request, _) = AskToBuy.request(
            product: 2,
            device: 1,
            approve: approve,
            nonConsumable: false,
            pendingSeconds: 3
        )
        var effects: [Effect] = []
        for _ in 0..<answers { effects = request.answer() }
        #expect(request.state == state && effects == last)
    }
}
