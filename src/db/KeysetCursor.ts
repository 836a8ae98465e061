import { isStorableInstant } from "./TimestampRange.ts"

/** Helpers of the newest-first, keyset-paginated lists (deliveries, invoices). */

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The position after a row, newest first: its creation time (ISO) and id, opaque to clients. */
export const encodeKeysetCursor = (createdAt: string, id: string) => Buffer.from(`${createdAt}|${id}`).toString("base64url")

/** The position a cursor names, or undefined when it is not one of ours. */
export const decodeKeysetCursor = (cursor: string): { readonly at: Date; readonly id: string } | undefined => {
  const [createdAt, id, ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split("|")
  const at = new Date(createdAt)
  return rest.length > 0 || id === undefined || !UUID_PATTERN.test(id) || !isStorableInstant(at.getTime()) ? undefined : { at, id }
}

/** The start of an id as the dashboard shows it (8 hex digits), up to a whole id less a digit: matched with LIKE, so hex and dashes only. */
export const ID_PREFIX_PATTERN = /^[0-9a-f]{8}[0-9a-f-]{0,27}$/i

/** `prefix%` for LIKE over `id::text`, or undefined when `text` is no id prefix (see ID_PREFIX_PATTERN). */
export const idPrefixPattern = (text: string) => ID_PREFIX_PATTERN.test(text) ? `${text.toLowerCase()}%` : undefined

/** `%text%` for ILIKE, with the pattern characters of `text` escaped. */
export const likePattern = (text: string) => `%${text.replace(/[\\%_]/g, "\\$&")}%`
