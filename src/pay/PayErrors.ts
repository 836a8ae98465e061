import { TooManyRequests } from "../http/ApiErrors.ts"

/** The public payment endpoints' own HTTP errors, declared once with their status and message (PublicApi.ts lists their statuses). */
export const PayErrors = {
  tooManyStatusStreams: (max: number) => new TooManyRequests({ error: `At most ${max} open status streams per client address; close one or poll the status` })
} as const
