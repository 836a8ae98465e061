/** How an entity is declared and its row and views derived (contract/Model.ts, shared with the SDK); re-exported for the service's imports. */
export * from "../../contract/Model.ts"
