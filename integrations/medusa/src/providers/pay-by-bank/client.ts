import { MedusaError } from "@medusajs/framework/utils"
import type { Payment } from "./status"

/** Link is the answer of POST /api/v1/links. */
export type Link = { url: string; expires_at: string }

/** Refund is a refund as POST /api/v1/payments/{id}/refunds and GET /api/v1/refunds/{id} give it. */
export type Refund = {
  id: string
  merchant_order_id: string
  amount: string
  currency: string
  reason: string
  state: string
  payer_url?: string
}

/** ApiError is a refusal of the app's API: its status and {"error": {"code", "message"}}. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: Record<string, unknown>
  ) {
    super(message)
  }
}

type Fetch = typeof fetch

/** Tries and waits of a call the app may answer 429 or 503, or not at all. */
const TRIES = 3
const TIMEOUT_MS = 10_000
const MAX_WAIT_MS = 5_000

/**
 * Client talks to the app's merchant API with the shop's token. Every call
 * it makes may be made again without harm (a link for the same order and
 * amount is the same order; a refund carries its Idempotency-Key), so a
 * call the app could not answer (no answer, 429, 503) is tried again, at
 * most three times, waiting what Retry-After asks up to 5 seconds.
 */
export class Client {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string,
    private readonly fetchFn: Fetch = fetch,
    private readonly wait: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms))
  ) {}

  /** createLink makes a signed checkout link for an order: POST /api/v1/links. */
  createLink(body: { order: string; amount: string; currency: string; return_url: string }): Promise<Link> {
    return this.call<Link>("POST", "/api/v1/links", body)
  }

  /** payment reads an order, or null when the app has never seen it: GET /api/v1/payments/{id}. */
  async payment(orderId: string): Promise<Payment | null> {
    try {
      return await this.call<Payment>("GET", `/api/v1/payments/${encodeURIComponent(orderId)}`)
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        return null
      }
      throw e
    }
  }

  /**
   * createRefund asks for money back to the payer:
   * POST /api/v1/payments/{id}/refunds. The same idempotencyKey always gives
   * the same refund, so a retry never refunds twice.
   */
  createRefund(orderId: string, body: { amount: string; reason: string }, idempotencyKey: string): Promise<Refund> {
    return this.call<Refund>("POST", `/api/v1/payments/${encodeURIComponent(orderId)}/refunds`, body, {
      "Idempotency-Key": idempotencyKey,
    })
  }

  private async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const url = this.baseUrl + path
    for (let attempt = 1; ; attempt++) {
      let res: Response
      try {
        res = await this.fetchFn(url, {
          method,
          headers: {
            Authorization: `Bearer ${this.token}`,
            Accept: "application/json",
            ...(body === undefined ? {} : { "Content-Type": "application/json" }),
            ...headers,
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          redirect: "error",
          signal: AbortSignal.timeout(TIMEOUT_MS),
        })
      } catch (e) {
        if (attempt < TRIES) {
          await this.wait(backoff(attempt))
          continue
        }
        throw new MedusaError(
          MedusaError.Types.UNEXPECTED_STATE,
          `Pay by bank: ${method} ${url} got no answer: ${(e as Error).message}`
        )
      }
      const text = await res.text()
      if (res.ok) {
        try {
          return JSON.parse(text) as T
        } catch {
          throw new MedusaError(MedusaError.Types.UNEXPECTED_STATE, `Pay by bank: ${method} ${url} answered ${res.status} with no JSON`)
        }
      }
      if ((res.status === 429 || res.status === 503) && attempt < TRIES) {
        await this.wait(retryAfter(res.headers.get("Retry-After")) ?? backoff(attempt))
        continue
      }
      throw apiError(res.status, text)
    }
  }
}

function apiError(status: number, text: string): ApiError {
  let body: Record<string, unknown> = {}
  try {
    body = JSON.parse(text) ?? {}
  } catch {
    // An answer that is not the API's (a proxy's page): the status says enough.
  }
  const err = (body.error ?? {}) as { code?: string; message?: string }
  const code = err.code ?? `http_${status}`
  return new ApiError(status, code, err.message ?? `the app answered ${status}`, body)
}

function backoff(attempt: number): number {
  return Math.min(MAX_WAIT_MS, 250 * 2 ** attempt * (0.5 + Math.random() / 2))
}

function retryAfter(header: string | null): number | undefined {
  const s = Number(header)
  return header && Number.isFinite(s) && s >= 0 ? Math.min(MAX_WAIT_MS, s * 1000) : undefined
}
