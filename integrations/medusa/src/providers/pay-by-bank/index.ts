import { ModuleProvider, Modules } from "@medusajs/framework/utils"

import { PayByBankProviderService } from "./service"

export { PayByBankProviderService }

export default ModuleProvider(Modules.PAYMENT, {
  services: [PayByBankProviderService],
})
