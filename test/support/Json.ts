/**
 * Parsed JSON read loosely: an answer's body (TestApp), or the traffic of a node a test stands in
 * front of (RpcFront). A suite reads the fields it asserts on, and the assertion is the check; the
 * contract's types, where a suite wants them, are in Answers.ts. The one `any` in test/, declared
 * here once.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonBody = any
