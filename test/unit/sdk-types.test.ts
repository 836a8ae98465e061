import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { generateSdkTypes, SDK_TYPES_FILE } from "../../scripts/sdk-types.ts"

describe("the SDK's types (sdk/src/types.ts)", () => {
  it("are what openapi-typescript generates from the API definition now (else run `npm run sdk:types`)", async () => {
    expect(readFileSync(SDK_TYPES_FILE, "utf8")).toBe(await generateSdkTypes())
  }, 60_000)
})
