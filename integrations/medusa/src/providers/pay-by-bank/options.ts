import { MedusaError } from "@medusajs/framework/utils"

/** Options are the provider's options in medusa-config.ts. */
export type Options = {
  /** baseUrl is the pay-by-bank app's address, e.g. https://pay.example.com. */
  baseUrl: string
  /** apiToken is the shop's API token, made on the app console's Developers page. */
  apiToken: string
  /** webhookSecret is the secret the app signs webhooks with (32 characters or more). */
  webhookSecret: string
  /** returnUrl is where the shopper comes back to, on one of the shop's return origins. */
  returnUrl: string
}

/**
 * checkOptions stops Medusa's start on options the provider could not work
 * with, naming the option and never showing a secret's value.
 */
export function checkOptions(options: Record<string, unknown> | undefined): Options {
  const o = options ?? {}
  const text = (name: keyof Options): string => {
    const v = o[name]
    if (typeof v !== "string" || v.trim() === "") {
      throw invalid(name, "is missing: set it in the provider's options in medusa-config.ts")
    }
    return v.trim()
  }
  const url = (name: keyof Options): string => {
    const v = text(name)
    let u: URL
    try {
      u = new URL(v)
    } catch {
      throw invalid(name, `is not an absolute URL: ${JSON.stringify(v)}`)
    }
    if ((u.protocol !== "https:" && u.protocol !== "http:") || u.username || u.password) {
      throw invalid(name, `must be an http or https address without credentials: ${JSON.stringify(v)}`)
    }
    return v
  }
  const baseUrl = url("baseUrl")
  if (new URL(baseUrl).search || new URL(baseUrl).hash) {
    throw invalid("baseUrl", `is the app's address, without a query or fragment: ${JSON.stringify(baseUrl)}`)
  }
  const apiToken = text("apiToken")
  if (/\s/.test(apiToken)) {
    throw invalid("apiToken", "holds a space or line break: copy the token again from the console's Developers page")
  }
  const webhookSecret = text("webhookSecret")
  if (webhookSecret.length < 32) {
    throw invalid("webhookSecret", "is shorter than 32 characters: copy the webhook secret from the console's Developers page")
  }
  return { baseUrl: baseUrl.replace(/\/+$/, ""), apiToken, webhookSecret, returnUrl: url("returnUrl") }
}

function invalid(option: string, why: string): MedusaError {
  return new MedusaError(MedusaError.Types.INVALID_DATA, `Pay by bank: the option ${option} ${why}.`)
}
