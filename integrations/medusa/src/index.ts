/**
 * The pay-by-bank payment provider for Medusa v2. Register it in
 * medusa-config.ts as `medusa-payment-pay-by-bank/providers/pay-by-bank`
 * (see README.md); this entry point is the same provider.
 */
export { default } from "./providers/pay-by-bank"
export { PayByBankProviderService } from "./providers/pay-by-bank/service"
export type { Options } from "./providers/pay-by-bank/options"
export type { SessionData } from "./providers/pay-by-bank/service"
