import path from "node:path"

import { defineConfig } from "@medusajs/framework/utils"

// The Medusa the integration tests start: this package's built provider
// (dist/, as a shop installs it), pointed at the app the test runs with.
module.exports = defineConfig({
  projectConfig: {
    // The test runner creates a database of its own and sets its address.
    databaseUrl: process.env.DATABASE_URL,
    http: {
      storeCors: "*",
      adminCors: "*",
      authCors: "*",
      jwtSecret: "medusa-integration-test-jwt-secret",
      cookieSecret: "medusa-integration-test-cookie-secret",
    },
  },
  admin: { disable: true },
  modules: [
    {
      resolve: "@medusajs/medusa/payment",
      options: {
        providers: [
          {
            resolve: path.join(__dirname, "../dist/providers/pay-by-bank/index.js"),
            id: "pay-by-bank",
            options: {
              baseUrl: process.env.PAY_BY_BANK_BASE_URL,
              apiToken: process.env.PAY_BY_BANK_API_TOKEN,
              webhookSecret: process.env.PAY_BY_BANK_WEBHOOK_SECRET,
              returnUrl: `http://127.0.0.1:${process.env.MEDUSA_PORT}/checkout/pay-by-bank`,
            },
          },
        ],
      },
    },
  ],
})
