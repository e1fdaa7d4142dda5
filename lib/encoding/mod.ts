/** Byte encodings without dependencies. */
export * from "./base64.ts";
