import { Schema } from "effect"

/**
 * The `livemode` query field of the dashboard's per-mode routes (issue #55): `false` selects the
 * test data or settings, `true` (or no field) the live ones.
 */
export const LivemodeQuery = {
  livemode: Schema.optionalKey(
    Schema.Literals(["true", "false"]).annotate({
      message: "must be true or false",
      description: "`false`: the test mode's data or settings; `true` or absent: live."
    })
  )
}

/** The mode a `livemode` query field names: live unless it says `false`. */
export const livemodeOf = (query: { readonly livemode?: "true" | "false" | undefined }): boolean => query.livemode !== "false"
