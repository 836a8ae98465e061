import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { signWebhook } from "../../src/webhooks/Signature.ts"

// The guide's signature snippets, run as a merchant would paste them, on a body signed the way the
// service's dispatcher signs.
const GUIDE = readFileSync("docs/merchant-guide.md", "utf8")
const workDir = mkdtempSync(join(tmpdir(), "merchant-guide-"))
afterAll(() => rmSync(workDir, { recursive: true, force: true }))

/** The first fenced block of `language` after the line that starts with `label`. */
const snippet = (label: string, language: string): string => {
  const start = GUIDE.indexOf(`\n${label}`)
  expect(start, `no "${label}" in the guide`).toBeGreaterThan(0)
  const match = GUIDE.slice(start).match(new RegExp("```" + language + "\\n([\\s\\S]*?)```"))
  expect(match, `no ${language} block after "${label}"`).not.toBeNull()
  return match![1]
}

const secret = "whsec_guide_3c9d"
const body = JSON.stringify({ event: "invoice_confirmed", invoice: { id: "0c1c5b0e-1f7a-4c55-8d0f-3f5f0f3e4b21", status: "confirmed", amountUsd: 49.99 } })
const signature = signWebhook(body, secret)
/** Each case: a body, a signature header (null: none) and the answer a correct check gives. */
const CASES = [
  { name: "good, lowercase", body, signature, valid: true },
  { name: "good, uppercase", body, signature: signature.toUpperCase(), valid: true },
  { name: "wrong secret", body, signature: signWebhook(body, "whsec_other"), valid: false },
  { name: "tampered body", body: body.replace("49.99", "0.01"), signature, valid: false },
  { name: "63 characters", body, signature: signature.slice(0, 63), valid: false },
  { name: "65 characters", body, signature: `${signature}a`, valid: false },
  { name: "prefixed", body, signature: `sha256=${signature}`, valid: false },
  { name: "no header", body, signature: null, valid: false }
]
const expected = Object.fromEntries(CASES.map((entry) => [entry.name, entry.valid]))

describe("the merchant guide's signature verification", () => {
  it("Node: true for the service's signature (either case), false for a bad one", () => {
    writeFileSync(join(workDir, "verify.mjs"), snippet("Node", "js"))
    writeFileSync(
      join(workDir, "run.mjs"),
      `import { verifyWebhookSignature } from "./verify.mjs"
const cases = JSON.parse(process.argv[2])
console.log(JSON.stringify(Object.fromEntries(cases.map((c) => [c.name, verifyWebhookSignature(Buffer.from(c.body), c.signature ?? undefined, ${JSON.stringify(secret)})]))))`
    )
    const output = execFileSync(process.execPath, [join(workDir, "run.mjs"), JSON.stringify(CASES)], { encoding: "utf8" })
    expect(JSON.parse(output)).toEqual(expected)
  })

  it("Python: true for the service's signature (either case), false for a bad one", () => {
    writeFileSync(
      join(workDir, "verify.py"),
      `${snippet("Python", "python")}

import json, sys
cases = json.loads(sys.argv[1])
print(json.dumps({c["name"]: verify_webhook_signature(c["body"].encode(), c["signature"], ${JSON.stringify(secret)}) for c in cases}))
`
    )
    const output = execFileSync("python3", [join(workDir, "verify.py"), JSON.stringify(CASES)], { encoding: "utf8" })
    expect(JSON.parse(output)).toEqual(expected)
  })

  it("shows PHP, Go and Ruby too", () => {
    expect(snippet("PHP", "php")).toContain("hash_equals")
    expect(snippet("Go", "go")).toContain("hmac.Equal")
    expect(snippet("Ruby", "ruby")).toContain("fixed_length_secure_compare")
  })
})

describe("the merchant's documents", () => {
  it("name no file of the service's source (a merchant never opens src/)", () => {
    for (const document of ["docs/merchant-guide.md", "sdk/README.md"]) expect(readFileSync(document, "utf8")).not.toMatch(/\bsrc\//)
  })

  it("are linked first from the README", () => {
    const firstLink = readFileSync("README.md", "utf8").match(/\]\(([^)]+)\)/)
    expect(firstLink?.[1]).toBe("docs/merchant-guide.md")
  })
})
