/**
 * What the release tier's tests share: the real tools it is given (`HELM_BIN`, `KREW_BIN`, `KREW_VALIDATE_BIN`,
 * `ACTIONLINT_BIN`, built outside this project), running them, and comparing a Helm render with a kustomize one.
 *
 * @module
 */
import { parseAllDocuments } from "yaml";
import { jsonEqual } from "../../tools/chart/tree.ts";
import { KEEP_ANNOTATION, KEPT_KINDS } from "../../tools/chart/features.ts";
import { ROOT } from "../api/cluster.ts";

// deno-lint-ignore no-explicit-any
export type Obj = Record<string, any>;

/** The tools the tier needs, by variable. */
export const TOOL_VARIABLES = ["HELM_BIN", "KREW_BIN", "KREW_VALIDATE_BIN", "ACTIONLINT_BIN"] as const;

/** A tool's path, from its variable. */
export function tool(name: (typeof TOOL_VARIABLES)[number]): string {
  const path = Deno.env.get(name);
  if (!path) throw new Error(`${name} is not set: deno task test:release needs ${TOOL_VARIABLES.join(", ")}`);
  return path;
}

/** What a command printed and its exit code. */
export interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command (in the repository unless `cwd`). */
export async function run(
  cmd: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; clearEnv?: boolean; stdin?: string } = {},
): Promise<Ran> {
  const child = new Deno.Command(cmd, {
    args: [...args],
    cwd: options.cwd ?? ROOT,
    ...(options.env ? { env: options.env } : {}),
    ...(options.clearEnv ? { clearEnv: true } : {}),
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(options.stdin));
    await w.close();
  }
  const out = await child.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/** A command that must succeed; returns stdout. */
export async function runOk(
  cmd: string,
  args: readonly string[],
  options: Parameters<typeof run>[2] = {},
): Promise<string> {
  const r = await run(cmd, args, options);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.code}):\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** Objects of a YAML stream by `Kind/namespace/name`. */
export function objectsById(text: string): Map<string, Obj> {
  const objects = parseAllDocuments(text).map((d) => d.toJS() as Obj).filter((o) => o);
  return new Map(objects.map((o) => [`${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`, o]));
}

/**
 * What differs between a `helm template` render and a kustomize render: objects missing, extra, or unequal. The
 * one difference by design, `helm.sh/resource-policy: keep` on the kept kinds, is taken out of the Helm render
 * first (and must be there).
 */
export function renderDiff(helm: string, kustomize: string): string[] {
  const h = objectsById(helm);
  const k = objectsById(kustomize);
  const problems: string[] = [];
  for (const [id, o] of h) {
    if (!KEPT_KINDS.includes(o.kind)) continue;
    if (o.metadata.annotations?.[KEEP_ANNOTATION] !== "keep") {
      problems.push(`${id}: no ${KEEP_ANNOTATION}: keep`);
    }
    delete o.metadata.annotations[KEEP_ANNOTATION];
    if (!Object.keys(o.metadata.annotations).length) delete o.metadata.annotations;
  }
  for (const id of new Set([...h.keys(), ...k.keys()])) {
    if (!h.has(id)) problems.push(`${id}: kustomize renders it, helm does not`);
    else if (!k.has(id)) problems.push(`${id}: helm renders it, kustomize does not`);
    else if (!jsonEqual(h.get(id), k.get(id))) {
      problems.push(
        `${id}: differs\n  helm:      ${JSON.stringify(h.get(id))}\n  kustomize: ${
          JSON.stringify(k.get(id))
        }`,
      );
    }
  }
  return problems;
}
