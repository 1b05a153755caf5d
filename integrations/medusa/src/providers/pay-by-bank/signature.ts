import { createHmac, timingSafeEqual } from "node:crypto"

/** SIGNATURE_HEADER is the header the app signs every webhook in. */
export const SIGNATURE_HEADER = "checkout-signature"

/** TOLERANCE_SECONDS is how far a webhook's time may be from ours: it stops replays. */
export const TOLERANCE_SECONDS = 5 * 60

/**
 * verifySignature checks a Checkout-Signature header,
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, against
 * the body exactly as it arrived. While the merchant rolls the secret the
 * header holds two v1 values; either may match. It returns why it refused, or
 * null when the webhook is the app's.
 */
export function verifySignature(
  secret: string,
  header: string | undefined,
  rawBody: Buffer,
  now: Date = new Date()
): string | null {
  if (!header) {
    return "no Checkout-Signature header"
  }
  let t = ""
  const signatures: string[] = []
  for (const part of header.split(",")) {
    const [name, value = ""] = part.trim().split(/=(.*)/s)
    if (name === "t") {
      t = value
    } else if (name === "v1") {
      signatures.push(value)
    }
  }
  if (!/^\d{1,12}$/.test(t) || signatures.length === 0) {
    return "a Checkout-Signature header without t= and v1="
  }
  if (Math.abs(now.getTime() / 1000 - Number(t)) > TOLERANCE_SECONDS) {
    return `a signature made at ${new Date(Number(t) * 1000).toISOString()}, more than 5 minutes from now`
  }
  const want = sign(secret, t, rawBody)
  const matches = signatures.some(
    (s) => s.length === want.length && timingSafeEqual(Buffer.from(s), Buffer.from(want))
  )
  return matches ? null : "a signature that does not match the webhook secret"
}

/** sign is the app's signature of a body at time t (unix seconds, as text). */
export function sign(secret: string, t: string, rawBody: Buffer): string {
  return createHmac("sha256", secret).update(`${t}.`).update(rawBody).digest("hex")
}
