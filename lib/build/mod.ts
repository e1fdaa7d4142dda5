/**
 * This build's identity: the release version, read from `deno.json` (the one place it is written), and the
 * `butler_build_info` series every process exports so that a fleet's versions can be counted from its metrics.
 *
 * @module
 */
import client from "prom-client";
import config from "../../deno.json" with { type: "json" };

/**
 * The release version of this source tree, as `deno.json` states it (`0.2.0`, no `v`; the git tag is `v0.2.0`).
 *
 * @example
 * ```ts
 * console.log(`butler ${VERSION}`);
 * ```
 */
export const VERSION: string = config.version;

/** The Deno that runs this process: part of the build's identity (the image pins it). */
export function denoVersion(): string {
  return Deno.version.deno;
}

/**
 * Registers `butler_build_info{version,component,deno} 1` in `registry`: a constant series whose labels say what
 * runs (`component` is `hooks` or `reporter`).
 *
 * @example
 * ```ts
 * registerBuildInfo(new client.Registry(), "hooks");
 * ```
 */
export function registerBuildInfo(registry: client.Registry, component: string): void {
  new client.Gauge({
    name: "butler_build_info",
    help:
      "Always 1; its labels name the Butler version, the component and the Deno version this process runs.",
    labelNames: ["version", "component", "deno"] as const,
    registers: [registry],
  }).set({ version: VERSION, component, deno: denoVersion() }, 1);
}
