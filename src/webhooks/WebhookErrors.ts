import { BadRequest, NotFound } from "../http/ApiErrors.ts"

/** The webhooks feature's HTTP errors, each declared once with its status and message (WebhooksApi.ts lists their statuses). */
export const WebhookErrors = {
  hasSecretReadOnly: () =>
    new BadRequest({ error: "hasSecret is read-only and cannot be changed here: POST /api/dashboard/webhook-settings/secret creates or rotates the secret" }),
  /** The destination URL refused (the reason names why; see Destination.ts). */
  invalidUrl: (reason: string) => new BadRequest({ error: reason }),
  deliveryNotFound: () => new NotFound({ error: "Delivery not found" })
} as const
