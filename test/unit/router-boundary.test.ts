import { describe, expect, it } from "vitest"
import { Api, ProductionApi } from "../../src/Api.ts"
import { DatabaseGate } from "../../src/http/DatabaseGate.ts"
import { PUBLIC_PREFIX } from "../../src/pay/PublicCors.ts"

// Issue #54 item 3: the router boundary as named pieces, each where it belongs.
const endpointsOf = (api: typeof Api | typeof ProductionApi) =>
  Object.values(api.groups).flatMap((group) => Object.values(group.endpoints).map((endpoint) => ({ group: group.identifier, endpoint })))

describe("the router boundary", () => {
  it("gates every endpoint on the database but liveness, declared by the groups", () => {
    const ungated = endpointsOf(Api).filter(({ endpoint }) => !endpoint.middlewares.has(DatabaseGate)).map(({ endpoint, group }) => `${group}.${endpoint.identifier}`)
    expect(ungated).toEqual(["health.live"])
  })

  it("mounts every group in production but the development simulator's", () => {
    const groups = (api: typeof Api | typeof ProductionApi) => Object.values(api.groups).map((group) => group.identifier)
    expect(groups(ProductionApi)).toEqual(groups(Api).filter((group) => group !== "dev"))
    expect(groups(Api)).toContain("dev")
  })

  it("opens CORS where the public groups' endpoints live", () => {
    expect(PUBLIC_PREFIX).toBe("/api/checkout/pay/")
  })
})
