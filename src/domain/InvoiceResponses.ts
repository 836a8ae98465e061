/** Part of the merchant API's contract (contract/InvoiceResponses.ts), shared with the SDK; re-exported for the service's imports. */
export * from "../../contract/InvoiceResponses.ts"
