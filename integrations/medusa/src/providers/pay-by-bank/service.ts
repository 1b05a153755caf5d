import { AbstractPaymentProvider, MedusaError, PaymentActions, PaymentSessionStatus } from "@medusajs/framework/utils"
import type {
  AuthorizePaymentInput,
  AuthorizePaymentOutput,
  CancelPaymentInput,
  CancelPaymentOutput,
  CapturePaymentInput,
  CapturePaymentOutput,
  DeletePaymentInput,
  DeletePaymentOutput,
  GetPaymentStatusInput,
  GetPaymentStatusOutput,
  InitiatePaymentInput,
  InitiatePaymentOutput,
  Logger,
  ProviderWebhookPayload,
  RefundPaymentInput,
  RefundPaymentOutput,
  RetrievePaymentInput,
  RetrievePaymentOutput,
  UpdatePaymentInput,
  UpdatePaymentOutput,
  WebhookActionResult,
} from "@medusajs/framework/types"

import { toAmount } from "./amount"
import { ApiError, Client, type Refund } from "./client"
import { checkOptions, type Options } from "./options"
import { SIGNATURE_HEADER, verifySignature } from "./signature"
import { type Payment, sessionStatus, webhookAction } from "./status"

/**
 * SessionData is what a payment session keeps: the order id this provider
 * gave the app and the link the storefront sends the shopper to.
 */
export type SessionData = {
  /** order_id is the app's merchant_order_id: Medusa's payment session id. */
  order_id: string
  /** url is the signed checkout link: send the shopper there. */
  url: string
  expires_at?: string
  amount: string
  currency: "EUR"
  /** status and paid are the app's, as last read. */
  status?: string
  paid?: boolean
  /** refunds are the app's refunds of this payment, by Medusa's refund id. */
  refunds?: Record<string, Pick<Refund, "id" | "amount" | "state" | "payer_url">>
}

/** The reason a refund made in Medusa carries to the payer: Medusa passes no note to providers. */
const REFUND_REASON = "Refund from the shop"

/** Medusa's payment session ids, which this provider uses as the app's order ids. */
const SESSION_ID = /^payses_[0-9A-Za-z]+$/

type Cradle = { logger?: Logger }

/**
 * PayByBankProviderService takes payments by bank transfer through the
 * pay-by-bank checkout app: a payment session is a signed link the shopper
 * follows to pick a bank; the app's signed webhook tells Medusa the money
 * arrived, and every status Medusa asks for is read from the app's API, so a
 * lost webhook never leaves an order hanging.
 */
export class PayByBankProviderService extends AbstractPaymentProvider<Options> {
  static identifier = "pay-by-bank"

  /** validateOptions stops Medusa's start on options naming what is wrong. */
  static validateOptions(options: Record<string, unknown>): void {
    checkOptions(options)
  }

  protected readonly options_: Options
  protected readonly client_: Client
  protected readonly logger_?: Logger

  constructor(cradle: Cradle, options: Options) {
    super(cradle, options)
    this.options_ = checkOptions(options)
    this.client_ = new Client(this.options_.baseUrl, this.options_.apiToken)
    this.logger_ = cradle.logger
  }

  /**
   * initiatePayment makes the signed checkout link of a new payment session,
   * for an order id of its own (the session's id), in euros only.
   */
  async initiatePayment(input: InitiatePaymentInput): Promise<InitiatePaymentOutput> {
    const currency = String(input.currency_code ?? "").toUpperCase()
    if (currency !== "EUR") {
      throw new MedusaError(
        MedusaError.Types.INVALID_DATA,
        `Pay by bank takes payments in euros only; this one is in ${currency || "no currency"}.`
      )
    }
    const amount = toAmount(input.amount)
    const orderId = (input.data?.session_id as string | undefined) ?? input.context?.idempotency_key
    if (!orderId) {
      throw new MedusaError(MedusaError.Types.INVALID_DATA, "Pay by bank: the payment session has no id to name the order by.")
    }
    const link = await this.client_
      .createLink({ order: orderId, amount, currency, return_url: this.options_.returnUrl })
      .catch((e) => {
        throw this.refusal("making a checkout link", e)
      })
    const data: SessionData = { order_id: orderId, url: link.url, expires_at: link.expires_at, amount, currency: "EUR" }
    return { id: orderId, data, status: PaymentSessionStatus.PENDING }
  }

  /**
   * updatePayment keeps a session whose amount and currency are unchanged.
   * The app fixes an order's amount with its first link, so a new amount
   * needs a new session: Medusa's own flows make one when a cart changes.
   */
  async updatePayment(input: UpdatePaymentInput): Promise<UpdatePaymentOutput> {
    const data = input.data as SessionData | undefined
    const currency = String(input.currency_code ?? "").toUpperCase()
    if (data?.order_id && toAmount(input.amount) === data.amount && currency === data.currency) {
      return { data, status: PaymentSessionStatus.PENDING }
    }
    throw new MedusaError(
      MedusaError.Types.NOT_ALLOWED,
      "Pay by bank: a payment session's amount cannot change; delete the session and make a new one."
    )
  }

  /** authorizePayment reads the payment from the app: "captured" only when paid. */
  async authorizePayment(input: AuthorizePaymentInput): Promise<AuthorizePaymentOutput> {
    return this.read(input.data)
  }

  /** getPaymentStatus reads the payment from the app, as authorizePayment does. */
  async getPaymentStatus(input: GetPaymentStatusInput): Promise<GetPaymentStatusOutput> {
    return this.read(input.data)
  }

  /** retrievePayment is the session's data with the app's status read now. */
  async retrievePayment(input: RetrievePaymentInput): Promise<RetrievePaymentOutput> {
    const { data } = await this.read(input.data)
    return { data }
  }

  /**
   * capturePayment has nothing to capture: a bank payment is the money on
   * the shop's account. It confirms that with the app, so an unpaid
   * payment is never marked captured.
   */
  async capturePayment(input: CapturePaymentInput): Promise<CapturePaymentOutput> {
    const { status, data } = await this.read(input.data)
    if (status !== PaymentSessionStatus.CAPTURED) {
      throw new MedusaError(MedusaError.Types.NOT_ALLOWED, `Pay by bank: order ${data.order_id} is not paid yet.`)
    }
    return { data }
  }

  /**
   * cancelPayment changes nothing at the app: an unpaid link is never paid
   * once its session is gone from the cart, and money that arrived comes
   * back only through a refund.
   */
  async cancelPayment(input: CancelPaymentInput): Promise<CancelPaymentOutput> {
    return { data: input.data }
  }

  /** deletePayment changes nothing at the app, as cancelPayment. */
  async deletePayment(input: DeletePaymentInput): Promise<DeletePaymentOutput> {
    return { data: input.data }
  }

  /**
   * refundPayment asks the app for money back to the payer, with Medusa's
   * refund id as Idempotency-Key: Medusa retrying a refund never refunds
   * twice. The refund's later states (the payer's account given, the
   * transfer sent and booked) are the app's to follow.
   */
  async refundPayment(input: RefundPaymentInput): Promise<RefundPaymentOutput> {
    const data = sessionData(input.data)
    const key = input.context?.idempotency_key
    if (!key) {
      throw new MedusaError(MedusaError.Types.INVALID_DATA, "Pay by bank: a refund needs Medusa's refund id as its idempotency key.")
    }
    const amount = toAmount(input.amount)
    let refund: Refund
    try {
      refund = await this.client_.createRefund(data.order_id, { amount, reason: REFUND_REASON }, key)
    } catch (e) {
      if (e instanceof ApiError && e.code === "refund_exceeds_paid") {
        const remaining = (e.body.error as Record<string, unknown> | undefined)?.remaining ?? e.body.remaining
        throw new MedusaError(
          MedusaError.Types.NOT_ALLOWED,
          `Pay by bank: €${amount} is more than remains to refund of order ${data.order_id}` +
            (remaining === undefined ? "." : ` (€${remaining}).`)
        )
      }
      throw this.refusal(`refunding order ${data.order_id}`, e)
    }
    const refunds = { ...data.refunds, [key]: { id: refund.id, amount: refund.amount, state: refund.state, payer_url: refund.payer_url } }
    return { data: { ...data, refunds } }
  }

  /**
   * getWebhookActionAndData turns the app's signed webhook into what Medusa
   * should do. A webhook whose signature does not verify on the raw body
   * (or is more than 5 minutes old) is refused: logged, and answered
   * "not_supported" without a session, which Medusa's webhook subscriber
   * acts on in no way. Medusa answers the app 200 whatever this decides.
   */
  async getWebhookActionAndData(payload: ProviderWebhookPayload["payload"]): Promise<WebhookActionResult> {
    const raw = rawBody(payload.rawData)
    const header = headerValue(payload.headers, SIGNATURE_HEADER)
    const refused = raw ? verifySignature(this.options_.webhookSecret, header, raw) : "no raw body to verify"
    if (refused) {
      this.logger_?.warn(`Pay by bank: a webhook was refused and changed nothing: ${refused}.`)
      return { action: PaymentActions.NOT_SUPPORTED }
    }
    const event = JSON.parse(raw!.toString("utf8")) as { id: string; type: string; data: Record<string, unknown> }
    switch (event.type) {
      case "payment.status_changed": {
        const p = event.data as unknown as Payment
        if (!SESSION_ID.test(p.merchant_order_id)) {
          // An order the shop made elsewhere (a payment link, another channel).
          return { action: PaymentActions.NOT_SUPPORTED }
        }
        return { action: webhookAction(p), data: { session_id: p.merchant_order_id, amount: p.amount } }
      }
      case "refund.created":
      case "refund.state_changed": {
        // Medusa has no state for a refund after it is made: it counts as
        // refunded from the start. A refund that did not reach the payer
        // (cancelled, or returned by their bank) is told to the merchant.
        const r = event.data as { refund_id?: string; merchant_order_id?: string; state?: string }
        const line = `Pay by bank: refund ${r.refund_id} of order ${r.merchant_order_id} is ${r.state}`
        if (r.state === "cancelled" || r.state === "returned") {
          this.logger_?.warn(`${line}: the money did not reach the payer; Medusa still counts it refunded.`)
        } else {
          this.logger_?.info(`${line}.`)
        }
        return { action: PaymentActions.NOT_SUPPORTED }
      }
      default:
        return { action: PaymentActions.NOT_SUPPORTED }
    }
  }

  private async read(input: Record<string, unknown> | undefined): Promise<{ status: PaymentSessionStatus; data: SessionData }> {
    const data = sessionData(input)
    const payment = await this.client_.payment(data.order_id).catch((e) => {
      throw this.refusal(`reading order ${data.order_id}`, e)
    })
    return { status: sessionStatus(payment), data: { ...data, status: payment?.status ?? "NOT_FOUND", paid: !!payment?.paid } }
  }

  private refusal(doing: string, e: unknown): Error {
    if (!(e instanceof ApiError)) {
      return e as Error
    }
    const fields = ((e.body.error as { fields?: { field: string; message: string }[] } | undefined)?.fields ?? [])
      .map((f) => `${f.field}: ${f.message}`)
      .join("; ")
    const hint =
      e.status === 401
        ? " Check the apiToken option: make a token on the app console's Developers page."
        : e.status === 403
          ? " The app has disabled this shop."
          : ""
    const type = e.status === 400 || e.status === 409 ? MedusaError.Types.INVALID_DATA : MedusaError.Types.UNEXPECTED_STATE
    return new MedusaError(type, `Pay by bank: ${doing} was refused (${e.status} ${e.code}): ${e.message}${fields ? ` (${fields})` : ""}.${hint}`)
  }
}

function sessionData(data: Record<string, unknown> | undefined): SessionData {
  if (typeof data?.order_id !== "string") {
    throw new MedusaError(MedusaError.Types.INVALID_DATA, "Pay by bank: this payment has no order id: it was not made by this provider.")
  }
  return data as unknown as SessionData
}

/**
 * rawBody is the webhook's body as it arrived. Medusa hands it over as a
 * Buffer, or, through an event bus that stores events as JSON (Redis), as
 * {"type": "Buffer", "data": [...]}.
 */
function rawBody(raw: unknown): Buffer | null {
  if (Buffer.isBuffer(raw)) {
    return raw
  }
  if (typeof raw === "string") {
    return Buffer.from(raw, "utf8")
  }
  if (raw instanceof Uint8Array) {
    return Buffer.from(raw)
  }
  const o = raw as { type?: string; data?: number[] } | null
  if (o?.type === "Buffer" && Array.isArray(o.data)) {
    return Buffer.from(o.data)
  }
  return null
}

function headerValue(headers: Record<string, unknown> | undefined, name: string): string | undefined {
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (k.toLowerCase() === name) {
      return Array.isArray(v) ? v.join(",") : typeof v === "string" ? v : undefined
    }
  }
  return undefined
}
