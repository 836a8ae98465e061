import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"

/** AES-256-GCM under a key derived from the configured encryption key; `v1:<iv|tag|ciphertext base64>`. */
const keyOf = (encryptionKey: Uint8Array) => createHash("sha256").update(encryptionKey).digest()

export const sealSecret = (plaintext: string, encryptionKey: Uint8Array): string => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", keyOf(encryptionKey), iv)
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
  return `v1:${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString("base64")}`
}

export const openSecret = (sealed: string, encryptionKey: Uint8Array): string => {
  const raw = Buffer.from(sealed.replace(/^v1:/, ""), "base64")
  const decipher = createDecipheriv("aes-256-gcm", keyOf(encryptionKey), raw.subarray(0, 12))
  decipher.setAuthTag(raw.subarray(12, 28))
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
}

export const generateWebhookSecret = (): string => `whsec_${randomBytes(32).toString("base64url")}`
