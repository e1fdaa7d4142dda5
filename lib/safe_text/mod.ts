/**
 * Tenant strings made safe to print: control characters escaped, CI runner commands defused, excerpts bounded.
 *
 * @module
 */
export * from "./safe_text.ts";
