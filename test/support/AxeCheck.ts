import AxeBuilder from "@axe-core/playwright"
import type { Page } from "playwright-core"

/**
 * The axe-core violations of the page as it is now, of any impact, each as "rule (impact): where"
 * so that a failing assertion says what to mend. An empty list is the goal on every view. Run in the
 * page itself (`axe.run`, the same rules): the default finishes each check in a new blank page, which
 * doubles its cost, and only matters for cross-origin frames, which no page of the service has.
 */
export const axeViolations = async (page: Page): Promise<ReadonlyArray<string>> => {
  const results = await new AxeBuilder({ page } as unknown as ConstructorParameters<typeof AxeBuilder>[0]).setLegacyMode().analyze()
  return results.violations.map((violation) => `${violation.id} (${violation.impact ?? "unknown"}): ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`)
}
