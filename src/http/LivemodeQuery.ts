import { Schema } from "effect"

/**
 * The dashboard's choice between live and test data (issue #55): `livemode=false` shows the
 * account's test objects, `livemode=true` or no parameter its live ones. Any other value is a 400.
 */
export const LivemodeQuery = {
  livemode: Schema.optionalKey(Schema.Literals(["true", "false"]).annotate({
    message: "must be true or false",
    description: "false: the account's test data (test mode); true or absent: its live data"
  }))
}

/** The mode a query asks for: live unless it says `livemode=false`. */
export const livemodeOf = (query: { readonly livemode?: "true" | "false" | undefined }): boolean => query.livemode !== "false"
