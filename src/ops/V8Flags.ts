import { setFlagsFromString } from "node:v8"

/**
 * Imported first by the entry point, before the runtime allocates much. V8's allocation-site
 * pretenuring, once a site's objects survived a few scavenges (a burst, a warm-up), allocates them
 * straight into old space; the per-request objects allocated there then die in old space while
 * still pointing at that request's young response string, and every scavenge copies and promotes
 * those strings (3–9 MB each, 7–12 ms pauses instead of under 1 ms) until the next full GC.
 * Measured in docs/decisions.md ("Where the paced p99 went").
 */
setFlagsFromString("--no-allocation-site-pretenuring")
