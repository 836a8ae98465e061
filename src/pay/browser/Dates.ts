/// <reference lib="dom" />
/// <reference lib="dom.iterable" />

/**
 * The locale of the page's dates: the page's language, in the payer's own region of it when the
 * browser names one (`en-GB`, `de-AT`), so that the dates speak the language the text speaks.
 */
const lang = document.documentElement.lang
const pageLocale = () => navigator.languages.find((tag) => tag.split("-")[0] === lang.split("-")[0]) ?? lang

/**
 * The page's one date format: its locale and the payer's time zone, the zone named ("Nov 28, 2026,
 * 2:05 PM GMT+1"). The server writes UTC (right without the script); this rewrites each `<time
 * data-local>` once.
 */
const FORMAT = new Intl.DateTimeFormat(pageLocale(), {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "numeric",
  minute: "2-digit",
  timeZoneName: "short"
})

export const localDate = (iso: string) => FORMAT.format(new Date(iso))

/** Rewrites the times not yet shown in the payer's zone (new ones come with a redraw). */
export const localizeDates = (root: ParentNode = document) => {
  for (const time of root.querySelectorAll<HTMLTimeElement>("time[data-local]:not([data-localized])")) {
    time.textContent = localDate(time.dateTime)
    time.setAttribute("data-localized", "")
  }
}
