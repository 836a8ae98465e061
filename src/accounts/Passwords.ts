import { scryptAsync } from "@noble/hashes/scrypt.js"
import { constantTimeEqual } from "./ApiKeyFormat.ts"

const PARAMS = { N: 2 ** 14, r: 8, p: 1, dkLen: 32 } as const

const derive = async (password: string, salt: Uint8Array, params: { N: number; r: number; p: number }) =>
  Buffer.from(await scryptAsync(new TextEncoder().encode(password.normalize("NFKC")), salt, { ...params, dkLen: 32 })).toString("hex")

/** `scrypt$N$r$p$<salt base64>$<hash hex>` with a per-user random salt. */
export const hashPassword = async (password: string): Promise<string> => {
  const salt = crypto.getRandomValues(new Uint8Array(16))
  const hash = await derive(password, salt, PARAMS)
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${Buffer.from(salt).toString("base64")}$${hash}`
}

export const verifyPassword = async (password: string, stored: string): Promise<boolean> => {
  const [scheme, n, r, p, salt, hash] = stored.split("$")
  if (scheme !== "scrypt" || hash === undefined) return false
  const candidate = await derive(password, new Uint8Array(Buffer.from(salt, "base64")), { N: Number(n), r: Number(r), p: Number(p) })
  return constantTimeEqual(candidate, hash)
}

/** Hash of a fixed password, compared against when the email is unknown so timing does not tell. */
export const DUMMY_HASH = "scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$0000000000000000000000000000000000000000000000000000000000000000"
