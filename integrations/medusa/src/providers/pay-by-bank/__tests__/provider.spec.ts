import { createHmac } from "node:crypto"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"

import { BigNumber } from "@medusajs/framework/utils"

import { PayByBankProviderService } from "../service"

const options = {
  baseUrl: "http://127.0.0.1:1",
  apiToken: "pbb_test_a-token-for-the-unit-tests",
  webhookSecret: "a-webhook-secret-of-32-characters-or-more",
  returnUrl: "https://shop.example/checkout/done",
}

/** A fake app: each test sets answer; every request it gets is kept. */
let server: Server
let answer: (req: IncomingMessage, body: string) => { status: number; body: unknown; headers?: Record<string, string> }
const requests: { method?: string; url?: string; headers: IncomingMessage["headers"]; body: string }[] = []
const warnings: string[] = []
let provider: PayByBankProviderService

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () => {
      requests.push({ method: req.method, url: req.url, headers: req.headers, body })
      const a = answer(req, body)
      res.writeHead(a.status, { "Content-Type": "application/json", ...a.headers })
      res.end(JSON.stringify(a.body))
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  const { port } = server.address() as AddressInfo
  const logger = { warn: (m: string) => warnings.push(m), info: () => {} }
  provider = new PayByBankProviderService({ logger } as never, { ...options, baseUrl: `http://127.0.0.1:${port}/` })
})

afterAll(() => new Promise((r) => server.close(r)))

beforeEach(() => {
  requests.length = 0
  warnings.length = 0
})

describe("validateOptions", () => {
  it.each([
    ["baseUrl", { baseUrl: undefined }, "baseUrl is missing"],
    ["baseUrl", { baseUrl: "pay.example.com" }, "baseUrl is not an absolute URL"],
    ["baseUrl", { baseUrl: "ftp://pay.example.com" }, "baseUrl must be an http or https address"],
    ["apiToken", { apiToken: "" }, "apiToken is missing"],
    ["apiToken", { apiToken: "pbb_test_a b" }, "apiToken holds a space"],
    ["webhookSecret", { webhookSecret: "short" }, "webhookSecret is shorter than 32 characters"],
    ["returnUrl", { returnUrl: 42 }, "returnUrl is missing"],
  ])("names %s", (_, change, message) => {
    expect(() => PayByBankProviderService.validateOptions({ ...options, ...change })).toThrow(message)
  })

  it("never shows a secret", () => {
    expect(() => PayByBankProviderService.validateOptions({ ...options, webhookSecret: "s3cr3t" })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining("s3cr3t") })
    )
  })

  it("accepts good options", () => {
    expect(() => PayByBankProviderService.validateOptions(options)).not.toThrow()
  })
})

describe("initiatePayment", () => {
  it("makes a signed link for the session with Medusa's amount carried exactly", async () => {
    answer = () => ({ status: 201, body: { url: "http://app.example/checkout?sig=x", expires_at: "2026-11-24T10:00:00Z" } })
    const out = await provider.initiatePayment({
      amount: new BigNumber(49.9),
      currency_code: "eur",
      data: { session_id: "payses_01ABC" },
      context: { idempotency_key: "payses_01ABC" },
    })
    expect(requests).toHaveLength(1)
    expect(requests[0].method).toBe("POST")
    expect(requests[0].url).toBe("/api/v1/links")
    expect(requests[0].headers.authorization).toBe(`Bearer ${options.apiToken}`)
    expect(JSON.parse(requests[0].body)).toEqual({
      order: "payses_01ABC", amount: "49.90", currency: "EUR", return_url: options.returnUrl,
    })
    expect(out).toEqual({
      id: "payses_01ABC",
      status: "pending",
      data: { order_id: "payses_01ABC", url: "http://app.example/checkout?sig=x", expires_at: "2026-11-24T10:00:00Z", amount: "49.90", currency: "EUR" },
    })
  })

  it("refuses another currency before asking the app", async () => {
    await expect(
      provider.initiatePayment({ amount: 10, currency_code: "usd", data: { session_id: "payses_1" } })
    ).rejects.toThrow("euros only; this one is in USD")
    expect(requests).toHaveLength(0)
  })

  it("refuses an amount of more than 2 decimals before asking the app", async () => {
    await expect(
      provider.initiatePayment({ amount: "10.005", currency_code: "eur", data: { session_id: "payses_1" } })
    ).rejects.toThrow("more than 2 decimals")
    expect(requests).toHaveLength(0)
  })

  it("says what the app refused, field by field", async () => {
    answer = () => ({
      status: 400,
      body: { error: { code: "validation_error", message: "the link breaks these rules", fields: [{ field: "amount", reason: "too_large", message: "amount is more than 15000" }] } },
    })
    await expect(
      provider.initiatePayment({ amount: 20000, currency_code: "eur", data: { session_id: "payses_1" } })
    ).rejects.toThrow("amount: amount is more than 15000")
  })

  it("tries again when the app is away for a moment", async () => {
    let calls = 0
    answer = () =>
      ++calls === 1
        ? { status: 503, body: { error: { code: "unavailable", message: "try again" } }, headers: { "Retry-After": "0" } }
        : { status: 201, body: { url: "http://app.example/checkout", expires_at: "2026-11-24T10:00:00Z" } }
    await provider.initiatePayment({ amount: 10, currency_code: "eur", data: { session_id: "payses_1" } })
    expect(requests).toHaveLength(2)
  })
})

describe("reading the payment", () => {
  const data = { order_id: "payses_1", url: "http://app.example/checkout", amount: "49.90", currency: "EUR" }

  it.each([
    [{ status: "COMPLETED", paid: true }, "captured"],
    [{ status: "ACCEPTED_SETTLEMENT_IN_PROCESS", paid: false }, "pending"],
    [{ status: "CANCELED", paid: false }, "canceled"],
  ])("authorizes %p as %s", async (p, want) => {
    answer = () => ({ status: 200, body: { merchant_order_id: "payses_1", amount: "49.90", currency: "EUR", final: false, ...p } })
    const out = await provider.authorizePayment({ data })
    expect(requests[0].url).toBe("/api/v1/payments/payses_1")
    expect(out.status).toBe(want)
    expect(out.data).toMatchObject({ ...data, status: p.status, paid: p.paid })
    expect((await provider.getPaymentStatus({ data })).status).toBe(want)
  })

  it("keeps an order the app has not seen pending", async () => {
    answer = () => ({ status: 404, body: { error: { code: "not_found", message: "no order" } } })
    expect((await provider.authorizePayment({ data })).status).toBe("pending")
  })

  it("captures only what is paid", async () => {
    answer = () => ({ status: 200, body: { merchant_order_id: "payses_1", amount: "49.90", currency: "EUR", status: "IN_PROGRESS", paid: false } })
    await expect(provider.capturePayment({ data })).rejects.toThrow("not paid yet")
  })
})

describe("refundPayment", () => {
  const data = { order_id: "payses_1", url: "http://app.example/checkout", amount: "49.90", currency: "EUR" }

  it("asks the app with Medusa's refund id as the Idempotency-Key", async () => {
    answer = () => ({
      status: 201,
      body: { id: "rf_1", merchant_order_id: "payses_1", amount: "10.50", currency: "EUR", reason: "Refund from the shop", state: "awaiting_account", payer_url: "http://app.example/r/x" },
    })
    const out = await provider.refundPayment({ data, amount: { value: "10.5", precision: 20 }, context: { idempotency_key: "ref_01XYZ" } })
    expect(requests[0].url).toBe("/api/v1/payments/payses_1/refunds")
    expect(requests[0].headers["idempotency-key"]).toBe("ref_01XYZ")
    expect(JSON.parse(requests[0].body)).toEqual({ amount: "10.50", reason: "Refund from the shop" })
    expect(out.data).toMatchObject({ refunds: { ref_01XYZ: { id: "rf_1", amount: "10.50", state: "awaiting_account" } } })
  })

  it("says how much remains when asked for more", async () => {
    answer = () => ({ status: 409, body: { error: { code: "refund_exceeds_paid", message: "more than remains", remaining: "5.00" } } })
    await expect(provider.refundPayment({ data, amount: 60, context: { idempotency_key: "ref_2" } })).rejects.toThrow(
      "more than remains to refund of order payses_1 (€5.00)"
    )
  })
})

describe("getWebhookActionAndData", () => {
  const event = (data: Record<string, unknown>, type = "payment.status_changed") =>
    Buffer.from(JSON.stringify({ id: "evt_1", type, created_at: "2026-11-23T10:00:00Z", data }))
  const signed = (raw: Buffer, secret = options.webhookSecret) => {
    const t = String(Math.floor(Date.now() / 1000))
    return { "checkout-signature": `t=${t},v1=${createHmac("sha256", secret).update(`${t}.`).update(raw).digest("hex")}` }
  }
  const paid = { merchant_order_id: "payses_01ABC", status: "COMPLETED", paid: true, final: true, amount: "49.90", currency: "EUR", attempt: 1 }

  it("captures a paid session", async () => {
    const raw = event(paid)
    expect(await provider.getWebhookActionAndData({ data: JSON.parse(raw.toString()), rawData: raw, headers: signed(raw) })).toEqual({
      action: "captured",
      data: { session_id: "payses_01ABC", amount: "49.90" },
    })
  })

  it("reads the raw body as an event bus stores it in JSON", async () => {
    const raw = event({ ...paid, paid: false, status: "CANCELED" })
    const stored = JSON.parse(JSON.stringify(raw))
    expect(await provider.getWebhookActionAndData({ data: {}, rawData: stored, headers: signed(raw) })).toMatchObject({ action: "failed" })
  })

  it("refuses a webhook signed with another secret, and logs why", async () => {
    const raw = event(paid)
    const out = await provider.getWebhookActionAndData({ data: JSON.parse(raw.toString()), rawData: raw, headers: signed(raw, "someone-else-s-secret-of-32-characters") })
    expect(out).toEqual({ action: "not_supported" })
    expect(warnings.join()).toContain("does not match the webhook secret")
  })

  it("leaves orders the shop made elsewhere, refunds and pings alone", async () => {
    for (const raw of [
      event({ ...paid, merchant_order_id: "A-1001" }),
      event({ refund_id: "rf_1", merchant_order_id: "payses_01ABC", amount: "10.00", currency: "EUR", state: "booked" }, "refund.state_changed"),
      event({}, "ping"),
    ]) {
      expect(await provider.getWebhookActionAndData({ data: {}, rawData: raw, headers: signed(raw) })).toEqual({ action: "not_supported" })
    }
  })

  it("tells the merchant of a refund returned by the payer's bank", async () => {
    const raw = event({ refund_id: "rf_1", merchant_order_id: "payses_01ABC", amount: "10.00", currency: "EUR", state: "returned" }, "refund.state_changed")
    await provider.getWebhookActionAndData({ data: {}, rawData: raw, headers: signed(raw) })
    expect(warnings.join()).toContain("refund rf_1 of order payses_01ABC is returned")
  })
})
