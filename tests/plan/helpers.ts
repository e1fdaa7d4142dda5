/** Shared set-up of the plan tests: the install, the examples, and a plan run with the real hooks. */
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import type { RouteRegistrar } from "../../lib/http/mod.ts";
import {
  manifestFiles,
  type Obj,
  type Outcome,
  parseManifests,
  type PlanResult,
  readInstall,
  runPlan,
  type SourcedObject,
} from "../../lib/plan/mod.ts";
import { type CommandRun, runCommand } from "../../lib/testing/mod.ts";

/** The project directory, ending in `/`. */
export const ROOT = new URL("../../", import.meta.url).pathname;
/** The instant every plan test runs at. */
export const NOW = "2026-11-23T10:00:00Z";
/** The install, read once. */
export const INSTALL = readInstall(ROOT);

/**
 * The examples a user can apply together (the set the real API server tier stores), every object Ready: the
 * other files reuse a name from it (the seeds show two lab-pools, three harvester-prods and two versions of one
 * IPAllocation) or overlap its pools.
 */
export const APPLIED_TOGETHER = [
  "credentials",
  "teams",
  "providerconfigs",
  "networkpools/edge-pool-cooldown.yaml",
  "networkpools/nutanix-node-pool.yaml",
  "networkpools/overflow-ip-pool.yaml",
  "networkpools/prod-ip-pool.yaml",
  "networkpools/proxmox-main-pool.yaml",
  "ipam/single-pool",
  "ipam/elastic",
  "tenantclusters",
  "ipallocations/prod-cluster-lb.yaml",
  "ipallocations/api-lb-pinned.yaml",
];

/** The objects of files or directories below `examples/` (or YAML text given inline). */
export function examples(...paths: string[]): SourcedObject[] {
  return paths.flatMap((p) => manifestFiles(`${ROOT}examples/${p}`)).flatMap((file) => {
    const parsed = parseManifests(Deno.readTextFileSync(file), file.replace(ROOT, ""));
    if (parsed.errors.length) throw new Error(parsed.errors.join("; "));
    return parsed.objects;
  });
}

/** The objects of an inline YAML stream. */
export function yaml(text: string, name = "inline.yaml"): SourcedObject[] {
  const parsed = parseManifests(text, name);
  if (parsed.errors.length) throw new Error(parsed.errors.join("; "));
  return parsed.objects;
}

/** Runs a plan with the real hooks (routes registered first win, for tests that fake one). */
export function plan(
  desired: readonly SourcedObject[],
  options: { live?: readonly Obj[]; routes?: readonly RouteRegistrar[]; maxRounds?: number } = {},
): Promise<PlanResult> {
  return runPlan({
    desired,
    live: options.live ?? [],
    now: NOW,
    install: INSTALL,
    routes: [...(options.routes ?? []), ...HOOK_ROUTES],
    ...(options.maxRounds ? { maxRounds: options.maxRounds } : {}),
  });
}

/** The outcome of the object named `name` (`Kind namespace/name`). */
export function outcomeOf(result: PlanResult, name: string): Outcome {
  const o = result.outcomes.find((x) => x.name === name);
  if (!o) throw new Error(`no outcome for ${name}: ${result.outcomes.map((x) => x.name).join(", ")}`);
  return o;
}

/** Runs `main.ts plan` as a user does, in the project directory, with `stdin` piped when given. */
export function planCli(
  args: readonly string[],
  options: { stdin?: string; env?: Record<string, string> } = {},
): Promise<CommandRun> {
  return runCommand(Deno.execPath(), [
    "run",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-run",
    `${ROOT}main.ts`,
    "plan",
    ...args,
  ], { cwd: ROOT, ...options });
}
