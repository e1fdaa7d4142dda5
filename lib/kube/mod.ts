/**
 * Reading the Kubernetes API: a small client with timeouts, retries and typed errors, and where the API is
 * (in-cluster ServiceAccount or kubeconfig). Admission and the reporter use it; hooks never do.
 *
 * @module
 */
export * from "./chunks.ts";
export * from "./cache.ts";
export * from "./client.ts";
export * from "./config.ts";
export * from "./events.ts";
export * from "./delegated_auth.ts";
export * from "./revision.ts";
export * from "./watch.ts";
