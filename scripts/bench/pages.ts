/**
 * Lighthouse scores (performance, accessibility, best practices; mobile profile) of every state of
 * the payer's page (test/e2e/PayScenes.ts) and of the dashboard's login and views after login
 * (./dashboard-pages.ts), from a throwaway app (in-memory database, development simulator) on
 * loopback. Prints a Markdown table with the audits that cost points; exits 1 when a page scores
 * below `--min` (100 by default) in any of the three.
 *
 *   npm run bench:pages [-- --min 90 --only "pay awaiting,dashboard overview" --langs en,ja]
 *
 * `--langs` scores the payer's pages once per language (`?lang=`; the default is the page's own
 * choice from Accept-Language, English here), named "pay <state> [<lang>]".
 *
 * `scorePages(scenes)` (./lighthouse.ts) scores any other list of pages the same way.
 */
import { parseArgs } from "node:util"
import { makePayScenes } from "../../test/e2e/PayScenes.ts"
import { startTestApp } from "../../test/support/TestApp.ts"
import { dashboardScenes } from "./dashboard-pages.ts"
import { scorePages, scoreTable } from "./lighthouse.ts"

export { scorePages, scoreTable } from "./lighthouse.ts"

if (import.meta.main) {
  const { values } = parseArgs({
    options: { min: { type: "string", default: "100" }, only: { type: "string" }, langs: { type: "string" } }
  })
  const only = values.only?.split(",")
  const app = await startTestApp()
  try {
    // The refund offer is the closed-unpaid page (its form opens on a click, which Lighthouse does not make).
    const langs = values.langs?.split(",")
    const payer = (await makePayScenes(app)).filter((scene) => scene.prepare === undefined).flatMap((scene) =>
      langs === undefined
        ? [{ name: `pay ${scene.name}`, url: `${app.baseUrl}/pay/${scene.id}` }]
        : langs.map((lang) => ({ name: `pay ${scene.name} [${lang}]`, url: `${app.baseUrl}/pay/${scene.id}?lang=${lang}` }))
    )
    const scenes = [...payer, ...await dashboardScenes(app)].filter((scene) => only === undefined || only.includes(scene.name.replace(/ \[.*\]$/, "")))
    const scores = await scorePages(scenes)
    console.log(scoreTable(scores))
    const below = scores.filter((score) => Math.min(score.performance, score.accessibility, score.bestPractices) < Number(values.min))
    if (below.length > 0) {
      console.error(`below ${values.min}: ${below.map((score) => score.name).join(", ")}`)
      process.exitCode = 1
    }
  } finally {
    await app.close()
  }
}
