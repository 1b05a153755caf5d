import { sessionStatus, webhookAction, type Payment } from "../status"

const payment = (status: string, paid: boolean): Payment => ({
  merchant_order_id: "payses_1", amount: "49.90", currency: "EUR", status, paid, final: status === "COMPLETED" || status === "CANCELED",
})

describe("status mapping", () => {
  it.each([
    ["COMPLETED", true, "captured", "captured"],
    ["COMPLETED", false, "pending", "pending"], // completed at another amount: not paid
    ["ACCEPTED_SETTLEMENT_IN_PROCESS", false, "pending", "pending"],
    ["IN_PROGRESS", false, "pending", "pending"],
    ["NOT_FOUND", false, "pending", "pending"],
    ["UNKNOWN", false, "pending", "pending"],
    ["CANCELED", false, "canceled", "failed"],
  ])("%s, paid %p: session %s, webhook %s", (status, paid, session, action) => {
    expect(sessionStatus(payment(status, paid))).toBe(session)
    expect(webhookAction(payment(status, paid))).toBe(action)
  })

  it("keeps an order the app has not seen pending", () => {
    expect(sessionStatus(null)).toBe("pending")
  })
})
