/**
 * Go's standard library as the API server's validators use it, in TypeScript: how Go prints a value in a message
 * (`%q`, `%v`, `json.Marshal`) and the parsers the OpenAPI formats call (`net`, `net/url`, `net/mail`, `time`).
 * Each follows the Go source it names; the real API server tier checks them on its corpus.
 *
 * @module
 */
export * from "./print.ts";
export * from "./net.ts";
export * from "./url.ts";
export * from "./mail.ts";
export * from "./time.ts";
