/** The lifecycle statechart, and one invoice's path through it. */

import type { Invoice, InvoiceDetail } from "./Api.ts"
import { chartFigure, exceptionTrail, lifecycleCharts, statusTrail, trailSteps } from "./Chart.ts"
import { h, notice, show, when } from "./Ui.ts"

const REGION_CAPTIONS: Record<string, string> = {
  status: "Statechart of the invoice statuses",
  exception: "Statechart of the merchant's review of exceptions"
}

export const lifecycleView = async () => {
  const charts = await lifecycleCharts()
  show(h("h1", {}, "Invoice lifecycle"),
    h("p", {}, "Every status an invoice can take and what moves it, drawn from the service's statechart. The two regions run side by side: ",
      "an invoice has a status and, at the same time, an exception state. Hover or focus an arrow for its guard and effects; zoom and drag to read it on a phone."),
    ...charts.map((chart) => chartFigure(chart, REGION_CAPTIONS[chart.region] ?? `Statechart region ${chart.region}`)))
}

/**
 * The invoice's own path: the statuses it went through (and its exceptions, if any) in words, and
 * the same path on the statechart, folded until asked for (the charts are tall; their layout is
 * fetched when first opened).
 */
export const invoicePath = (invoice: Invoice, timeline: InvoiceDetail["timeline"]) => {
  const trails = [
    { region: "status", trail: statusTrail(invoice, timeline) },
    ...(invoice.exceptionType === null ? [] : [{ region: "exception", trail: exceptionTrail(invoice, timeline) }])
  ]
  const caption = (region: string) => REGION_CAPTIONS[region] ?? region
  const lists = trails.map(({ region, trail }) =>
    h("ol", { class: "path", start: "0", "aria-label": `${caption(region)}: this invoice's path` }, ...trailSteps(trail, when).map((step) => h("li", {}, step)))
  )
  const fold = h("details", { class: "statechart-fold" }, h("summary", {}, "Show the path on the statechart")) as HTMLDetailsElement
  fold.addEventListener("toggle", () => {
    if (!fold.open || fold.dataset.drawn !== undefined) return
    fold.dataset.drawn = ""
    void lifecycleCharts().then((charts) => {
      for (const { region, trail } of trails) {
        const chart = charts.find((candidate) => candidate.region === region)
        if (chart !== undefined) fold.append(chartFigure(chart, `${caption(region)}, with this invoice's path`, trail))
      }
    }, (error: Error) => fold.append(notice(error.message)))
  })
  return [...lists, fold]
}
