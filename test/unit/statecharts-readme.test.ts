import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { createMachine, initialTransition, transition } from "xstate"

const ROOT = join(import.meta.dirname, "..", "..")
const README = readFileSync(join(ROOT, "statecharts", "README.md"), "utf8")

/** The README's TypeScript example: the first ```ts block of its "Loading invoice.json" section. */
const readmeExample = () => {
  const section = README.slice(README.indexOf("## Loading invoice.json"))
  const match = /```ts\n([\s\S]*?)```/.exec(section)
  if (match === null) throw new Error("statecharts/README.md has no ```ts example under \"Loading invoice.json\"")
  return match[1]
}

describe("statecharts/README.md", () => {
  it("its example loads invoice.json with its guards and runs a late payment and a confirmation, as written", () => {
    const example = readmeExample()
    expect(example).toContain("machineFromConfigJson")
    expect(example).toContain(`"EVIDENCE"`)
    // Run exactly as the README says: from the repository root, by Node with its type stripping.
    const run = () =>
      execFileSync(process.execPath, ["--input-type=module-typescript", "--disable-warning=ExperimentalWarning"], { cwd: ROOT, input: example, encoding: "utf8", stdio: "pipe" })
    expect(run).not.toThrow()
  })

  it("says why createMachine(json) alone is not enough", () => {
    const json = JSON.parse(readFileSync(join(ROOT, "statecharts", "invoice.json"), "utf8"))
    const bare = createMachine(json)
    const [start] = initialTransition(bare)
    expect(() => transition(bare, start, { type: "EVIDENCE", onTime: "partial", total: "partial", newLatePayment: false })).toThrow(/Guard 'onTimeIs' is not implemented/)
    expect(README).toContain("Guard\n'onTimeIs' is not implemented")
  })

  it("documents every event's payload and every guard of invoice.json", () => {
    const json = readFileSync(join(ROOT, "statecharts", "invoice.json"), "utf8")
    const guards = new Set([...json.matchAll(/"guard": \{\s*"type": "([\w.]+)"/g)].map((match) => match[1]))
    const nestedGuards = new Set([...json.matchAll(/"type": "((?:xstate\.)?\w+)",\s*"params": \{\s*"(?:level|action|stateValue|guards)"/g)].map((match) => match[1]))
    for (const guard of [...guards, ...nestedGuards, "newLatePayment"]) expect(README, guard).toContain(`| \`${guard}\``)
    for (const event of ["VOID", "RECORD_PAYMENT", "EVIDENCE", "DEADLINE_PASSED", "CLOSE_EXCEPTION", "REORG_SETTLED"]) expect(README, event).toContain(`| \`${event}\` |`)
    for (const field of ["`onTime`", "`total`", "`newLatePayment`", "`action`"]) expect(README).toContain(field)
  })
})
