import { PaymentActions, PaymentSessionStatus } from "@medusajs/framework/utils"

/** Payment is an order as GET /api/v1/payments/{id} and the webhooks tell it. */
export type Payment = {
  merchant_order_id: string
  amount: string
  currency: string
  /** The provider's status: NOT_FOUND, IN_PROGRESS, ACCEPTED_SETTLEMENT_IN_PROCESS, COMPLETED, CANCELED, UNKNOWN… */
  status: string
  /** True only when a payment of the order's own amount and currency is COMPLETED. */
  paid: boolean
  final: boolean
}

/**
 * sessionStatus is what Medusa is told when it asks about a payment
 * (authorizePayment, getPaymentStatus). Only `paid` is money on the shop's
 * account: it is "captured", since a bank payment moves the money at once
 * and leaves nothing to capture later. ACCEPTED_SETTLEMENT_IN_PROCESS can
 * still be reversed, so it stays pending and no order is made on it. A
 * payment the bank or the shopper refused is "canceled"; the shopper may
 * still try again on the same link, and a later read says so. An order the
 * app has not seen yet (null) is pending.
 */
export function sessionStatus(p: Payment | null): PaymentSessionStatus {
  if (p?.paid) {
    return PaymentSessionStatus.CAPTURED
  }
  if (p?.status === "CANCELED") {
    return PaymentSessionStatus.CANCELED
  }
  return PaymentSessionStatus.PENDING
}

/**
 * webhookAction is what a payment.status_changed webhook asks of Medusa:
 * "captured" when paid (Medusa then authorizes the session, which reads the
 * payment again, captures it and completes the cart), "failed" when the bank
 * or the shopper refused it, "pending" while the bank works. Medusa acts on
 * "captured" alone; the others change nothing.
 */
export function webhookAction(p: Payment): PaymentActions {
  if (p.paid) {
    return PaymentActions.SUCCESSFUL
  }
  if (p.status === "CANCELED") {
    return PaymentActions.FAILED
  }
  return PaymentActions.PENDING
}
