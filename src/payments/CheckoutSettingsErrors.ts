import { BadRequest, Conflict, NotFound } from "../http/ApiErrors.ts"

/** The checkout settings' HTTP errors, each declared once with its status and message (CheckoutSettingsApi.ts lists their statuses). */
export const CheckoutSettingsErrors = {
  notFound: () => new NotFound({ error: "Checkout configuration not found" }),
  /** A payment method refused (the message names the field; see MethodValidation.ts and PublicWallets.ts). */
  invalidMethod: (problem: string) => new BadRequest({ error: problem }),
  tokenContractFixed: (index: number) =>
    new BadRequest({
      error: `paymentMethods[${index}].tokenContract is set by the deployment (CHECKOUT_TOKEN_<NETWORK>_<ASSET>) and cannot be changed here`
    }),
  noForwarderFactory: (network: string) =>
    new Conflict({
      error: `Wallet-contract payments on ${network} cannot be enabled: no forwarder factory is configured (CHECKOUT_FORWARDER_FACTORY_${network.toUpperCase()})`
    }),
  networkNotWatched: (network: string, setting: string) =>
    new Conflict({ error: `Payment methods on ${network} cannot be enabled: this deployment does not watch ${network} (${setting} is not set)` })
} as const
