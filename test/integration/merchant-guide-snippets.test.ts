import { execFileSync, spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signWebhook } from "../../src/webhooks/Signature.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"

// The guide's signature snippets in its five languages, each run as a merchant would paste it, on
// fixed vectors signed the way the dispatcher signs and on one real delivery the service sent.
const GUIDE = readFileSync("docs/merchant-guide.md", "utf8")
const workDir = mkdtempSync(join(tmpdir(), "merchant-guide-"))

/** The first fenced block of `language` after the line that starts with `label`. */
const snippet = (label: string, language: string): string => {
  const start = GUIDE.indexOf(`\n${label}`)
  expect(start, `no "${label}" in the guide`).toBeGreaterThan(0)
  const match = GUIDE.slice(start).match(new RegExp("```" + language + "\\n([\\s\\S]*?)```"))
  expect(match, `no ${language} block after "${label}"`).not.toBeNull()
  return match![1]
}

interface Case {
  readonly name: string
  readonly body: string
  /** The `X-Checkout-Signature` header; null: none. */
  readonly signature: string | null
  readonly secret: string
  /** What a correct check answers. */
  readonly valid: boolean
}

const secret = "whsec_guide_3c9d"
const body = JSON.stringify({ event: "invoice_confirmed", invoice: { id: "0c1c5b0e-1f7a-4c55-8d0f-3f5f0f3e4b21", status: "confirmed", amountUsd: 49.99 } })
const signature = signWebhook(body, secret)
const VECTORS: ReadonlyArray<Case> = [
  { name: "good, lowercase", body, signature, secret, valid: true },
  { name: "good, uppercase", body, signature: signature.toUpperCase(), secret, valid: true },
  { name: "wrong secret", body, signature: signWebhook(body, "whsec_other"), secret, valid: false },
  { name: "tampered body", body: body.replace("49.99", "0.01"), signature, secret, valid: false },
  { name: "63 characters", body, signature: signature.slice(0, 63), secret, valid: false },
  { name: "65 characters", body, signature: `${signature}a`, secret, valid: false },
  { name: "prefixed", body, signature: `sha256=${signature}`, secret, valid: false },
  { name: "no header", body, signature: null, secret, valid: false }
]

/** How each language's snippet is made into a program that prints `{caseName: verified}` for the cases in a JSON file. */
interface Language {
  readonly label: string
  readonly fence: string
  /** The interpreter, and the Debian package that brings it. */
  readonly command: string
  readonly debianPackage: string
  readonly run: (code: string, casesFile: string) => string
}

const inWorkDir = (file: string, text: string) => {
  writeFileSync(join(workDir, file), text)
  return join(workDir, file)
}
const exec = (command: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env) => execFileSync(command, args, { encoding: "utf8", env, timeout: 180_000 })

/** A language whose snippet and driver make one program file, run as `<command> <file> <cases file>`. */
const oneFile = (label: string, fence: string, command: string, debianPackage: string, file: string, program: (code: string) => string): Language => ({
  label,
  fence,
  command,
  debianPackage,
  run: (code, casesFile) => exec(command, [inWorkDir(file, program(code)), casesFile])
})

const LANGUAGES: ReadonlyArray<Language> = [
  oneFile("Node", "js", process.execPath, "nodejs", "verify.mjs", (code) =>
    `${code}
import { readFileSync } from "node:fs"
const cases = JSON.parse(readFileSync(process.argv[2], "utf8"))
console.log(JSON.stringify(Object.fromEntries(cases.map((c) => [c.name, verifyWebhookSignature(Buffer.from(c.body), c.signature ?? undefined, c.secret)]))))
`),
  oneFile("Python", "python", "python3", "python3", "verify.py", (code) =>
    `${code}

import json, sys
cases = json.load(open(sys.argv[1], encoding="utf-8"))
print(json.dumps({c["name"]: verify_webhook_signature(c["body"].encode(), c["signature"], c["secret"]) for c in cases}))
`),
  oneFile("PHP", "php", "php", "php-cli", "verify.php", (code) =>
    `<?php
${code}
$results = [];
foreach (json_decode(file_get_contents($argv[1]), true) as $c) {
    $results[$c['name']] = verify_webhook_signature($c['body'], $c['signature'], $c['secret']);
}
echo json_encode($results), "\\n";
`),
  {
    label: "Go",
    fence: "go",
    command: "go",
    debianPackage: "golang-go",
    run: (code, casesFile) => {
      // The snippet is a file of package main; the driver is another file of the same package.
      const verify = inWorkDir("verify.go", `package main\n\n${code}`)
      const main = inWorkDir(
        "main.go",
        `package main

import (
	"encoding/json"
	"fmt"
	"os"
)

type testCase struct {
	Name      string  \`json:"name"\`
	Body      string  \`json:"body"\`
	Signature *string \`json:"signature"\`
	Secret    string  \`json:"secret"\`
}

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var cases []testCase
	if err := json.Unmarshal(data, &cases); err != nil {
		panic(err)
	}
	results := map[string]bool{}
	for _, c := range cases {
		header := "" // what r.Header.Get answers without the header
		if c.Signature != nil {
			header = *c.Signature
		}
		results[c.Name] = VerifyWebhookSignature([]byte(c.Body), header, c.Secret)
	}
	out, _ := json.Marshal(results)
	fmt.Println(string(out))
}
`
      )
      // The standard library only: no module download, caches inside the test's directory.
      const goHome = join(workDir, "go")
      mkdirSync(goHome, { recursive: true })
      const env = { ...process.env, HOME: goHome, GOPATH: join(goHome, "path"), GOCACHE: join(goHome, "cache"), GOPROXY: "off", GOTOOLCHAIN: "local", GOFLAGS: "" }
      return exec("go", ["run", verify, main, casesFile], env)
    }
  },
  oneFile("Ruby", "ruby", "ruby", "ruby", "verify.rb", (code) =>
    `${code}

require "json"
cases = JSON.parse(File.read(ARGV[0], encoding: "UTF-8"))
puts JSON.generate(cases.to_h { |c| [c["name"], verify_webhook_signature(c["body"], c["signature"], c["secret"])] })
`)
]

const installed = (command: string) => {
  const probe = spawnSync(command, [command === "go" ? "version" : "--version"], { encoding: "utf8" })
  return probe.error === undefined && probe.status === 0
}
/** In CI (`.ci/run` installs the interpreters) a missing one fails the suite; elsewhere its language is skipped, saying which. */
const inCi = process.env.CI !== undefined && !["", "0", "false"].includes(process.env.CI)

let database: Awaited<ReturnType<typeof privateDatabase>>
let app: TestApp
let receiver: WebhookReceiver
let cases: ReadonlyArray<Case>
let casesFile: string

/** One invoice_created delivery from the service's dispatcher, as received, and what a correct check says of it. */
const realDelivery = async (): Promise<ReadonlyArray<Case>> => {
  const merchant = await app.createMerchant()
  receiver.on("/hooks/guide", (response) => response.writeHead(204).end())
  expect((await merchant.dashboard("/api/dashboard/webhook-settings", { method: "PUT", body: { url: receiver.url("/hooks/guide") } })).status).toBe(200)
  const deliverySecret = (await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })).body.secret as string
  // Non-ASCII text in the body: the check is over the raw UTF-8 bytes.
  expect((await merchant.api("/api/checkout/invoices", { body: { amountUsd: 12.5, metadata: { notes: "Thé vert — 1 kg" } } })).status).toBe(201)
  while (receiver.received("/hooks/guide").length === 0) await new Promise((resolve) => setTimeout(resolve, 100))
  const delivery = receiver.received("/hooks/guide")[0]
  const header = delivery.headers["x-checkout-signature"] as string
  expect(delivery.body).toContain("Thé vert — 1 kg")
  return [
    { name: "real delivery", body: delivery.body, signature: header, secret: deliverySecret, valid: true },
    { name: "real delivery, re-serialised", body: JSON.stringify(JSON.parse(delivery.body), null, 2), signature: header, secret: deliverySecret, valid: false }
  ]
}

beforeAll(async () => {
  database = await privateDatabase()
  app = await startTestApp({ role: "all", webhookAllowLoopback: true, databaseUrl: database.url })
  receiver = await startWebhookReceiver()
  cases = [...VECTORS, ...(await realDelivery())]
  casesFile = inWorkDir("cases.json", JSON.stringify(cases))
})

afterAll(async () => {
  await receiver?.close()
  await app?.close()
  await database?.drop()
  rmSync(workDir, { recursive: true, force: true })
})

describe("the merchant guide's signature verification, in each of its languages", () => {
  for (const language of LANGUAGES) {
    it(`${language.label}: true for the service's signature (either case, and a real delivery), false for a bad one`, (context) => {
      if (!installed(language.command)) {
        const reason = `${language.command} is not installed (apt-get install -y ${language.debianPackage})`
        if (inCi) throw new Error(`${language.label} snippet cannot run: ${reason}; .ci/run installs it`)
        process.stderr.write(`merchant guide: the ${language.label} snippet is skipped, ${reason}\n`)
        context.skip(reason)
      }
      const output = language.run(snippet(language.label, language.fence), casesFile)
      expect(JSON.parse(output)).toEqual(Object.fromEntries(cases.map((entry) => [entry.name, entry.valid])))
    })
  }
})
