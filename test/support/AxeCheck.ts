import AxeBuilder from "@axe-core/playwright"
import type { Page } from "playwright-core"

/**
 * The axe-core violations of the page as it is now, of any impact, each as "rule (impact): where"
 * so that a failing assertion says what to mend. An empty list is the goal on every view.
 */
export const axeViolations = async (page: Page): Promise<ReadonlyArray<string>> => {
  const results = await new AxeBuilder({ page } as unknown as ConstructorParameters<typeof AxeBuilder>[0]).analyze()
  return results.violations.map((violation) => `${violation.id} (${violation.impact ?? "unknown"}): ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`)
}
