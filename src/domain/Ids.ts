/** Part of the merchant API's contract (contract/Ids.ts), shared with the SDK; re-exported for the service's imports. */
export * from "../../contract/Ids.ts"
