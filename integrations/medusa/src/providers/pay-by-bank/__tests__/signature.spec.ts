import { createHmac } from "node:crypto"

import { verifySignature } from "../signature"

const secret = "a-webhook-secret-of-32-characters-or-more"
const body = Buffer.from('{"id":"evt_1","type":"payment.status_changed","data":{"merchant_order_id":"payses_1"}}')
const now = new Date("2026-11-23T10:00:00Z")
const t = String(now.getTime() / 1000)
// Signed here the way docs/integrate.md tells a shop to check it, not with the code under test.
const hmac = (key: string, ts: string, b: Buffer) => createHmac("sha256", key).update(`${ts}.${b.toString()}`).digest("hex")

describe("verifySignature", () => {
  it("accepts the app's signature on the raw body", () => {
    expect(verifySignature(secret, `t=${t},v1=${hmac(secret, t, body)}`, body, now)).toBeNull()
  })

  it("accepts either signature while the secret is rolled", () => {
    const header = `t=${t},v1=${hmac("the-new-secret-of-32-characters-or-more", t, body)},v1=${hmac(secret, t, body)}`
    expect(verifySignature(secret, header, body, now)).toBeNull()
  })

  it("accepts a clock up to 5 minutes off either way", () => {
    for (const skew of [-299, 299]) {
      const ts = String(Number(t) + skew)
      expect(verifySignature(secret, `t=${ts},v1=${hmac(secret, ts, body)}`, body, now)).toBeNull()
    }
  })

  it.each([
    ["no header", undefined, "no Checkout-Signature"],
    ["no v1", `t=${t}`, "without t= and v1="],
    ["no t", `v1=${hmac(secret, t, body)}`, "without t= and v1="],
    ["another secret", `t=${t},v1=${hmac("someone-else-s-secret-of-32-characters", t, body)}`, "does not match"],
    ["another time in the signed text", `t=${t},v1=${hmac(secret, String(Number(t) - 1), body)}`, "does not match"],
    ["a short signature", `t=${t},v1=abc`, "does not match"],
    ["a replay 6 minutes on", `t=${Number(t) - 360},v1=${hmac(secret, String(Number(t) - 360), body)}`, "more than 5 minutes"],
    ["a time 6 minutes ahead", `t=${Number(t) + 360},v1=${hmac(secret, String(Number(t) + 360), body)}`, "more than 5 minutes"],
  ])("refuses %s", (_, header, why) => {
    expect(verifySignature(secret, header, body, now)).toContain(why)
  })

  it("refuses a body changed by a byte, or parsed and written again", () => {
    const header = `t=${t},v1=${hmac(secret, t, body)}`
    const changed = Buffer.from(body.toString().replace("evt_1", "evt_2"))
    const rewritten = Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 1))
    expect(verifySignature(secret, header, changed, now)).toContain("does not match")
    expect(verifySignature(secret, header, rewritten, now)).toContain("does not match")
  })
})
