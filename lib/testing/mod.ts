/**
 * Test helpers shared by the hook tests: golden fixtures, a ready-made test app, and the manifests loader.
 *
 * @module
 */
export * from "./golden.ts";
export * from "./app.ts";
export * from "./manifests.ts";
