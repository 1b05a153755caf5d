import { createHmac } from "node:crypto"

import {
  createApiKeysWorkflow,
  createProductsWorkflow,
  createRegionsWorkflow,
  createSalesChannelsWorkflow,
  getOrderDetailWorkflow,
  linkSalesChannelsToApiKeyWorkflow,
  refundPaymentWorkflow,
} from "@medusajs/core-flows"
import type { MedusaContainer } from "@medusajs/framework/types"
import { ContainerRegistrationKeys, Modules } from "@medusajs/framework/utils"
import { medusaIntegrationTestRunner } from "@medusajs/test-utils"

import { PayByBankProviderService } from "../dist/providers/pay-by-bank/service"

// A real Medusa on PostgreSQL with this provider, against the pay-by-bank
// app in sandbox mode. tests/medusa/medusa_test.go in the repository starts
// the app and runs these with its address, token and webhook secret.
const app = {
  baseUrl: process.env.PAY_BY_BANK_BASE_URL ?? "",
  apiToken: process.env.PAY_BY_BANK_API_TOKEN ?? "",
  webhookSecret: process.env.PAY_BY_BANK_WEBHOOK_SECRET ?? "",
}
const medusaPort = process.env.MEDUSA_PORT ?? ""
const medusa = `http://127.0.0.1:${medusaPort}`
const returnUrl = `${medusa}/checkout/pay-by-bank`
const providerId = "pp_pay-by-bank_pay-by-bank"
const webhookPath = "/hooks/payment/pay-by-bank_pay-by-bank"

// Medusa's start (its migrations) takes a minute on an idle machine; CI runs other
// packages' tests beside this one.
jest.setTimeout(300_000)

if (!app.baseUrl || !app.apiToken || !app.webhookSecret || !medusaPort) {
  describe("Medusa with the pay-by-bank app", () => {
    it.skip("needs the app: run `go test ./tests/medusa/` from the repository's root, which starts it", () => {})
  })
} else {
  medusaIntegrationTestRunner({
    cwd: __dirname,
    env: { PORT: medusaPort },
    testSuite: ({ getContainer }) => {
      let publishableKey: string
      let regionId: string
      let variantId: string

      beforeAll(async () => {
        const container = getContainer()
        const { result: [channel] } = await createSalesChannelsWorkflow(container).run({
          input: { salesChannelsData: [{ name: "Web shop" }] },
        })
        const { result: [key] } = await createApiKeysWorkflow(container).run({
          input: { api_keys: [{ title: "Storefront", type: "publishable", created_by: "test" }] },
        })
        await linkSalesChannelsToApiKeyWorkflow(container).run({ input: { id: key.id, add: [channel.id] } })
        const { result: [region] } = await createRegionsWorkflow(container).run({
          input: { regions: [{ name: "Germany", currency_code: "eur", countries: ["de"], payment_providers: [providerId] }] },
        })
        // A product without a shipping profile: nothing to ship, so the
        // cart needs no shipping method to be completed.
        const { result: [product] } = await createProductsWorkflow(container).run({
          input: {
            products: [{
              title: "Sandbox poster",
              status: "published",
              options: [{ title: "Size", values: ["A2"] }],
              variants: [{ title: "A2", options: { Size: "A2" }, manage_inventory: false, prices: [{ amount: 49.9, currency_code: "eur" }] }],
              sales_channels: [{ id: channel.id }],
            }],
          },
        })
        publishableKey = key.token
        regionId = region.id
        variantId = product.variants[0].id
      })

      /** store calls Medusa's store API as a storefront does. */
      async function store(method: string, path: string, body?: unknown): Promise<any> {
        const res = await storeAnswer(method, path, body)
        if (res.status >= 300) {
          throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`)
        }
        return res.body
      }

      async function storeAnswer(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
        const res = await fetch(medusa + path, {
          method,
          headers: { "Content-Type": "application/json", "x-publishable-api-key": publishableKey },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(30_000),
        })
        return { status: res.status, body: await res.json() }
      }

      /** cartWithSession is a EUR cart of one poster with a pay-by-bank payment session. */
      async function cartWithSession(): Promise<{ cartId: string; session: { id: string; status: string; data: Record<string, any> } }> {
        const { cart } = await store("POST", "/store/carts", { region_id: regionId, email: "shopper@example.com" })
        await store("POST", `/store/carts/${cart.id}/line-items`, { variant_id: variantId, quantity: 1 })
        const { payment_collection } = await store("POST", "/store/payment-collections", { cart_id: cart.id })
        const { payment_collection: withSession } = await store(
          "POST", `/store/payment-collections/${payment_collection.id}/payment-sessions`, { provider_id: providerId }
        )
        return { cartId: cart.id, session: withSession.payment_sessions[0] }
      }

      /**
       * payAtSandboxBank is the shopper at the app: the link, a bank, the
       * sandbox bank's approve or reject button, and the way back. It
       * returns where the app sends the shopper in the end.
       */
      async function payAtSandboxBank(link: string, action: "approve" | "reject"): Promise<URL> {
        const hop = async (url: string, form?: Record<string, string>) => {
          const res = await fetch(url, {
            method: form ? "POST" : "GET",
            headers: form ? { "Content-Type": "application/x-www-form-urlencoded" } : {},
            body: form ? new URLSearchParams(form).toString() : undefined,
            redirect: "manual",
            signal: AbortSignal.timeout(30_000),
          })
          const location = res.headers.get("location")
          if (res.status !== 303 && res.status !== 302 || !location) {
            throw new Error(`${form ? "POST" : "GET"} ${url}: ${res.status}, not a redirect: ${(await res.text()).slice(0, 500)}`)
          }
          return new URL(location, url).toString()
        }
        const checkout = await hop(link)
        const bank = await hop(`${checkout}/pay`, { country: "DE", bank: "deutsche-bank" })
        const status = await hop(bank, { action })
        // The app's status page: the shopper takes its way back to the shop.
        const page = await (await fetch(status, { signal: AbortSignal.timeout(30_000) })).text()
        const anchor = /<a\b[^>]*data-testid="way-back"[^>]*>/.exec(page)?.[0] ?? ""
        const href = /href="([^"]*)"/.exec(anchor)?.[1]
        if (!href) {
          throw new Error(`the status page at ${status} has no way back to the shop: ${page.slice(0, 500)}`)
        }
        let next = new URL(unescapeHtml(href), status).toString()
        while (next.startsWith(app.baseUrl)) {
          next = await hop(next)
        }
        return new URL(next)
      }

      function unescapeHtml(s: string): string {
        return s.replace(/&(amp|lt|gt|quot|#39|#43);/g, (_, e) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", "#43": "+" })[e as string]!)
      }

      /** eventually asks until check gives a value, for at most 90 seconds. */
      async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
        const deadline = Date.now() + 90_000
        for (;;) {
          const v = await check()
          if (v !== undefined) {
            return v
          }
          if (Date.now() > deadline) {
            throw new Error(`still waiting after 90 s for ${what}`)
          }
          await new Promise((r) => setTimeout(r, 500))
        }
      }

      /** appApi calls the app's merchant API with the shop's token. */
      async function appApi(path: string): Promise<any> {
        const res = await fetch(app.baseUrl + path, {
          headers: { Authorization: `Bearer ${app.apiToken}` },
          signal: AbortSignal.timeout(30_000),
        })
        const body = await res.json()
        if (!res.ok) {
          throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(body)}`)
        }
        return body
      }

      /** deliveredWebhook waits until the app has told Medusa an order's status. */
      function deliveredWebhook(orderId: string, status: string) {
        return eventually(`the app's ${status} webhook for ${orderId} to reach Medusa`, async () => {
          const { events } = await appApi("/api/v1/events?limit=200")
          return events.find((e: any) =>
            e.type === "payment.status_changed" && e.data.merchant_order_id === orderId && e.data.status === status && e.delivery === "delivered"
          )
        })
      }

      async function cartState(container: MedusaContainer, cartId: string) {
        const query = container.resolve(ContainerRegistrationKeys.QUERY)
        const { data: [cart] } = await query.graph({
          entity: "cart",
          fields: ["id", "completed_at", "payment_collection.payment_sessions.*", "payment_collection.payments.*"],
          filters: { id: cartId },
        })
        const { data: [link] } = await query.graph({ entity: "order_cart", fields: ["order_id"], filters: { cart_id: cartId } })
        return { cart, orderId: link?.order_id as string | undefined }
      }

      /** paidOrder pays a new cart at the sandbox bank and waits for Medusa's order. */
      async function paidOrder(container: MedusaContainer) {
        const { cartId, session } = await cartWithSession()
        const back = await payAtSandboxBank(session.data.url, "approve")
        expect(back.origin + back.pathname).toBe(returnUrl)
        expect(back.searchParams.get("merchant_order_id")).toBe(session.id)
        const orderId = await eventually("the cart to become an order", async () => (await cartState(container, cartId)).orderId)
        return { cartId, session, orderId }
      }

      it("makes a signed link for the cart's exact amount, in euros", async () => {
        const { session } = await cartWithSession()
        expect(session.status).toBe("pending")
        expect(session.data).toMatchObject({ order_id: session.id, amount: "49.90", currency: "EUR" })
        const link = new URL(session.data.url)
        expect(link.origin + link.pathname).toBe(`${app.baseUrl}/checkout`)
        expect(link.searchParams.get("order")).toBe(session.id)
        expect(link.searchParams.get("amount")).toBe("49.90")
        expect(link.searchParams.get("return_url")).toBe(returnUrl)
      })

      it("completes the cart into a captured order when the app's webhook says paid", async () => {
        const container = getContainer()
        const { cartId, session, orderId } = await paidOrder(container)
        await deliveredWebhook(session.id, "COMPLETED")
        const { result: order } = await getOrderDetailWorkflow(container).run({
          input: { order_id: orderId, fields: ["id", "total", "payment_status", "payment_collections.payments.captures.amount"] },
        })
        expect(order.payment_status).toBe("captured")
        expect(Number(order.total)).toBe(49.9)
        const paid = await appApi(`/api/v1/payments/${session.id}`)
        expect(paid).toMatchObject({ paid: true, amount: "49.90", currency: "EUR" })
        // The storefront completing the cart on the shopper's return gets the same order.
        const completed = await store("POST", `/store/carts/${cartId}/complete`)
        expect(completed).toMatchObject({ type: "order", order: { id: orderId } })
      })

      it("leaves the cart open when the shopper rejects the payment at the bank", async () => {
        const container = getContainer()
        const { cartId, session } = await cartWithSession()
        const back = await payAtSandboxBank(session.data.url, "reject")
        expect(back.searchParams.get("status")).toBe("CANCELED")
        await deliveredWebhook(session.id, "CANCELED")
        // Medusa handles the webhook 5 seconds after it came; it must change nothing.
        await new Promise((r) => setTimeout(r, 7_000))
        let { cart, orderId } = await cartState(container, cartId)
        expect(orderId).toBeUndefined()
        expect(cart.completed_at).toBeNull()
        expect(cart.payment_collection.payments).toHaveLength(0)
        // A storefront that tries to complete it anyway is told the payment is not authorized.
        const completed = await storeAnswer("POST", `/store/carts/${cartId}/complete`)
        expect(completed).toMatchObject({ status: 400, body: { type: "not_allowed", message: expect.stringContaining("not authorized") } })
        ;({ cart, orderId } = await cartState(container, cartId))
        expect(orderId).toBeUndefined()
        expect(cart.payment_collection.payment_sessions[0].status).toBe("canceled")
      })

      it("refuses a webhook with a wrong signature, changing nothing", async () => {
        const container = getContainer()
        const { cartId, session } = await cartWithSession()
        const body = JSON.stringify({
          id: "evt_forged", type: "payment.status_changed", created_at: new Date().toISOString(),
          data: { merchant_order_id: session.id, status: "COMPLETED", paid: true, final: true, amount: "49.90", currency: "EUR", attempt: 1 },
        })
        const now = Math.floor(Date.now() / 1000)
        const header = (secret: string, t: number) =>
          `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}`
        const forged = header("a-forger-s-guess-at-the-secret-0000000", now)
        const replayed = header(app.webhookSecret, now - 600)
        for (const signature of [forged, replayed]) {
          const res = await fetch(medusa + webhookPath, {
            method: "POST",
            headers: { "Content-Type": "application/json", "Checkout-Signature": signature },
            body,
            signal: AbortSignal.timeout(30_000),
          })
          expect(res.status).toBe(200) // Medusa answers every webhook and handles it later
        }
        await new Promise((r) => setTimeout(r, 7_000))
        const { cart, orderId } = await cartState(container, cartId)
        expect(orderId).toBeUndefined()
        expect(cart.completed_at).toBeNull()
        expect(cart.payment_collection.payments).toHaveLength(0)
        expect(cart.payment_collection.payment_sessions[0].status).toBe("pending")

        // The same body with the shop's secret is one Medusa would act on.
        const payment = container.resolve(Modules.PAYMENT)
        const decide = (signature: string) =>
          payment.getWebhookActionAndData({
            provider: "pay-by-bank_pay-by-bank",
            payload: { data: JSON.parse(body), rawData: Buffer.from(body), headers: { "checkout-signature": signature } },
          })
        expect(await decide(forged)).toEqual({ action: "not_supported" })
        expect(await decide(replayed)).toEqual({ action: "not_supported" })
        expect(await decide(header(app.webhookSecret, now))).toEqual({
          action: "captured", data: { session_id: session.id, amount: "49.90" },
        })
      })

      it("refunds from Medusa at the app, once however often it is asked", async () => {
        const container = getContainer()
        const { session, orderId } = await paidOrder(container)
        const query = container.resolve(ContainerRegistrationKeys.QUERY)
        const paymentOf = async () =>
          (await query.graph({ entity: "payment", fields: ["id", "data", "refunds.id"], filters: { payment_session_id: session.id } })).data[0]
        const captured = await eventually("the order's payment to be captured", async () => {
          const { result } = await getOrderDetailWorkflow(container).run({ input: { order_id: orderId, fields: ["id", "payment_status"] } })
          return result.payment_status === "captured" ? paymentOf() : undefined
        })
        await refundPaymentWorkflow(container).run({ input: { payment_id: captured.id, amount: 10.5 } })
        const refunded = await paymentOf()
        expect(refunded.refunds).toHaveLength(1)
        const medusaRefundId = refunded.refunds[0].id
        const atApp = refunded.data.refunds[medusaRefundId]
        expect(atApp).toMatchObject({ amount: "10.50" })

        const refund = await appApi(`/api/v1/refunds/${atApp.id}`)
        expect(refund).toMatchObject({ id: atApp.id, merchant_order_id: session.id, amount: "10.50", currency: "EUR" })

        // Medusa asking again with the same refund id gets the same refund.
        const provider = new PayByBankProviderService({} as never, { ...app, returnUrl })
        const again = await provider.refundPayment({ data: refunded.data, amount: 10.5, context: { idempotency_key: medusaRefundId } })
        expect((again.data as any).refunds[medusaRefundId].id).toBe(atApp.id)
        const { refunds } = await appApi(`/api/v1/refunds?order=${encodeURIComponent(session.id)}`)
        expect(refunds.map((r: any) => r.id)).toEqual([atApp.id])
      })
    },
  })
}
