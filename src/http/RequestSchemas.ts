/** Part of the merchant API's contract (contract/RequestSchemas.ts), shared with the SDK; re-exported for the service's imports. */
export * from "../../contract/RequestSchemas.ts"
