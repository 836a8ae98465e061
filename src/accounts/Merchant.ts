import { Schema, Struct } from "effect"
import { rowOf } from "../db/Columns.ts"
import { MerchantId } from "../domain/Ids.ts"

export const AccountStatus = Schema.Literals(["active", "disabled"])
export type AccountStatus = typeof AccountStatus.Type

export const BillingStatus = Schema.Literals(["active", "blocked"])
export type BillingStatus = typeof BillingStatus.Type

/** A merchant account as stored (the password only as its hash; none for accounts made without one). */
export const Merchant = Schema.Struct({
  id: MerchantId,
  email: Schema.String,
  passwordHash: Schema.NullOr(Schema.String),
  status: AccountStatus,
  billingStatus: BillingStatus,
  isDemo: Schema.Boolean,
  createdAt: Schema.Date
})
export type Merchant = typeof Merchant.Type

/** A `merchants` row as the driver returns it. */
export const MerchantRow = rowOf(Merchant)

/** The signed-in user as the dashboard knows it. */
export const User = Merchant.mapFields(Struct.pick(["id", "email", "createdAt"]))
export type User = typeof User.Type

/** A signed-in user's `merchants` row. */
export const UserRow = rowOf(User)
