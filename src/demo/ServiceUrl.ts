import type { AppConfigShape } from "../config/AppConfig.ts"

/** Where a local client reaches this service: its listen address (the start banner and the simulator client use it). */
export const serviceUrl = (config: Pick<AppConfigShape, "host" | "port">): string => {
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.port}`
}
