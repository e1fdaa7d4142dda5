/**
 * Test helpers shared by the tests: golden fixtures, a ready-made test app, the manifests loader, and running a
 * program to read what it printed.
 *
 * @module
 */
export * from "./golden.ts";
export * from "./app.ts";
export * from "./command.ts";
export * from "./manifests.ts";
export * from "./review.ts";
