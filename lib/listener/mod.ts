/**
 * The listeners of the service and the reporter: `node:http(s)` servers whose connections are capped and timed
 * from their accept on (`guard.ts`), with TLS files reloaded as they change (`tls.ts`).
 *
 * @module
 */
export * from "./guard.ts";
export * from "./serve.ts";
export * from "./tls.ts";
export * from "./metrics.ts";
