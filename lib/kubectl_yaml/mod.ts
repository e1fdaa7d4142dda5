/**
 * Manifests read as `kubectl` reads them: documents split as its decoder splits a stream, YAML 1.1 scalars,
 * repeated keys, merge keys and aliases as go-yaml v2 and sigs.k8s.io/yaml resolve them, and each document's JSON
 * value or why it cannot be read.
 *
 * @module
 */
export * from "./resolve.ts";
export * from "./decode.ts";
export * from "./documents.ts";
