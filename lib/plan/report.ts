import { Document, Scalar, visit } from "yaml";
import type { Outcome } from "./apply.ts";
import type { PlanResult } from "./plan.ts";
import { escapeQuoted, needsQuoting, safeLine } from "../safe_text/mod.ts";
import { maskSecret, maskSecretPair, type Redact, redactDeep, redactor } from "./mask.ts";
import { canonical, describe, type Obj, objectId } from "./store.ts";
import { exitCode, resultLine, verdictOf } from "./verdict.ts";

/** Field errors of one refusal printed before the rest are counted (a refusal can list thousands). */
export const MAX_CAUSES = 20;

/** A refusal's message with at most {@linkcode MAX_CAUSES} of its causes (and how many more there are). */
function boundedMessage(
  message: string | undefined,
  causes: readonly string[] | undefined,
): string | undefined {
  if (message === undefined || !causes || causes.length <= MAX_CAUSES) return message;
  const head = message.slice(0, message.length - causes.join("; ").length);
  return `${head}${boundedCauses(causes).join("; ")}`;
}

/** Every Secret value the plan holds (the input, --live, the result), to redact from what it prints. */
function secretsOf(result: PlanResult): Redact {
  return redactor([...result.live, ...result.objects, ...result.outcomes.map((o) => o.input)]);
}

/** The causes printed of a refusal: the first {@linkcode MAX_CAUSES}, then how many more there are. */
export function boundedCauses(causes: readonly string[]): string[] {
  if (causes.length <= MAX_CAUSES) return [...causes];
  return [...causes.slice(0, MAX_CAUSES), `... and ${causes.length - MAX_CAUSES} more`];
}

const MARK: Record<Outcome["action"], string> = {
  create: "+",
  update: "~",
  unchanged: "=",
  refused: "!",
  skipped: "?",
  unreadable: "x",
};

// deno-lint-ignore no-explicit-any
type Condition = { type: string; status: string; reason?: string; message?: string; [k: string]: any };

const conditionsOf = (o: Obj): Condition[] => Array.isArray(o.status?.conditions) ? o.status.conditions : [];

/** `Ready=False (Reason): message`, or the phase when an object has no Ready condition. */
function statusLine(o: Obj): string | undefined {
  const ready = conditionsOf(o).find((c) => c.type === "Ready");
  const phase = typeof o.status?.phase === "string" ? `phase ${o.status.phase}` : undefined;
  if (!ready) return phase;
  const detail = `Ready=${ready.status}${ready.reason ? ` (${ready.reason})` : ""}${
    ready.message ? `: ${ready.message}` : ""
  }`;
  return phase ? `${phase}, ${detail}` : detail;
}

const controlledBy = (o: Obj, uid: string) =>
  (o.metadata.ownerReferences ?? []).some((r: { controller?: boolean; uid?: string }) =>
    r.controller && r.uid === uid
  );

function percent(part: number, whole: number): string {
  return whole > 0 ? `${Math.round((part / whole) * 100)}%` : "-";
}

function poolLine(pool: Obj): string {
  const s = pool.status ?? {};
  if (typeof s.totalIPs !== "number") return `${describe(pool)}: no status`;
  const capacity = conditionsOf(pool).filter((c) => c.type.startsWith("Capacity") && c.status === "True")
    .map((c) => c.type);
  return `${describe(pool)}: ${s.allocatedIPs}/${s.totalIPs} IPs allocated (${
    percent(s.allocatedIPs, s.totalIPs)
  }), ` +
    `${s.allocationCount ?? 0} allocation(s), largest free block ${s.largestFreeBlock ?? 0}; ` +
    (capacity.length ? capacity.join(", ") : "no capacity condition");
}

const TEAM_LIMITS: readonly [string, string, string][] = [
  ["clusters", "clusters", "maxClusters"],
  ["nodes", "totalNodes", "maxTotalNodes"],
  ["CPU", "totalCPU", "maxCPUCores"],
  ["memory", "totalMemory", "maxMemory"],
  ["storage", "totalStorage", "maxStorage"],
];

function teamLine(team: Obj): string {
  const usage = team.status?.resourceUsage;
  if (!usage) return `${describe(team)}: no usage reported`;
  const limits = team.spec?.resourceLimits ?? {};
  const parts = TEAM_LIMITS.map(([label, used, max]) =>
    `${label} ${usage[used] ?? 0}${limits[max] !== undefined ? `/${limits[max]}` : ""}`
  );
  const quota = team.status?.quotaStatus;
  const message = team.status?.quotaMessage;
  return `${describe(team)}: ${parts.join(", ")}${
    quota ? `; quota ${quota}${message ? `: ${message}` : ""}` : ""
  }`;
}

/** Whether a plan is clean: converged, every object admitted and Ready, no controller failing. */
export function planSucceeded(result: PlanResult): boolean {
  return exitCode(verdictOf(result), "not-ready") === 0;
}

/**
 * The plan as text: each input object (admitted or refused with the API server's message, its children and
 * status), the pools, the teams' usage against their limits, failing syncs, and a last line that says whether
 * everything converges and is admitted.
 */
export function renderText(result: PlanResult, notes: readonly string[] = []): string {
  const count = (action: Outcome["action"]) => result.outcomes.filter((o) => o.action === action).length;
  const lines = [
    `Plan at ${result.now}: ${result.outcomes.length} object(s): ${count("create")} to create, ${
      count("update")
    } to update, ` +
    `${count("unchanged")} unchanged, ${count("refused")} refused, ${count("skipped")} skipped` +
    (count("unreadable") ? `; ${count("unreadable")} document(s) unreadable` : ""),
    ...notes,
    result.converged
      ? `Controllers converge after ${result.rounds} round(s) of every hook.`
      : `Controllers do NOT converge: objects still change after ${result.rounds} round(s).`,
    "",
    "Objects",
  ];
  const byId = new Map(result.objects.map((o) => [objectId(o), o]));
  for (const outcome of result.outcomes) {
    const where = outcome.line ? `${outcome.source}, line ${outcome.line}` : outcome.source;
    lines.push(`  ${MARK[outcome.action]} ${outcome.name}  (${where})`);
    const refusal = outcome.refusal;
    if (refusal?.causes) {
      // Several field errors: one per line, as kubectl prints them.
      const head = refusal.message.slice(0, refusal.message.length - refusal.causes.join("; ").length)
        .trimEnd();
      lines.push(
        `      refused by ${refusal.by}: ${head}`,
        ...boundedCauses(refusal.causes).map((c) => `        * ${c}`),
      );
    } else if (outcome.action === "unreadable" && refusal) {
      lines.push(`      unreadable: ${refusal.message}`);
    } else if (refusal) {
      lines.push(`      refused by ${refusal.by}: ${refusal.message}`);
    }
    if (outcome.note) {
      lines.push(`      ${outcome.action === "skipped" ? "skipped" : "note"}: ${outcome.note}`);
    }
    lines.push(...(outcome.warnings ?? []).map((w) => `      Warning: ${w}`));
    const o = byId.get(outcome.id);
    if (!o || outcome.action === "refused" || outcome.action === "skipped") continue;
    const status = statusLine(o);
    if (status) lines.push(`      status: ${status}`);
    const addresses = o.status?.loadBalancer?.addresses;
    if (Array.isArray(addresses) && addresses.length) {
      lines.push(`      load balancer addresses: ${addresses.join(", ")}`);
    }
    const children = result.objects.filter((c) => controlledBy(c, o.metadata.uid));
    for (const c of children) {
      lines.push(
        `      child: ${describe(c)}${typeof c.status?.cidr === "string" ? ` (${c.status.cidr})` : ""}`,
      );
    }
  }
  const pools = result.objects.filter((o) => o.kind === "NetworkPool");
  if (pools.length) lines.push("", "Pools", ...pools.map((p) => `  ${poolLine(p)}`));
  const teams = result.objects.filter((o) => o.kind === "Team");
  if (teams.length) lines.push("", "Teams", ...teams.map((t) => `  ${teamLine(t)}`));
  if (result.failures.length) {
    lines.push("", "Failing syncs", ...result.failures.map((f) => `  ${f.name}: ${f.message}`));
  }
  const verdict = verdictOf(result);
  if (verdict.notReady.length) {
    lines.push("", "Not Ready", ...verdict.notReady.map((n) => `  ${n.name}: ${n.why}`));
  }
  if (verdict.waiting.length) {
    lines.push(
      "",
      "Waiting on objects the plan was not given (no object of their kind in the input or --live)",
      ...verdict.waiting.map((n) => `  ${n.name}: ${n.why}, waits on ${n.on.join(", ")}`),
    );
  }
  lines.push("", resultLine(verdict));
  // Every line holds strings a repository wrote (kinds, names, files, messages quoting them): escaped, and no
  // Secret value.
  const redact = secretsOf(result);
  return lines.map((l) => safeLine(redact(l))).join("\n") + "\n";
}

/**
 * The objects the plan touches: those of the input, and those it creates or changes (children, status); a live
 * object the input does not name and the plan leaves as it was is not printed.
 */
function touched(result: PlanResult): Obj[] {
  const named = new Set(result.outcomes.map((o) => o.id));
  const before = new Map(result.live.map((o) => [objectId(o), canonical(o)]));
  return result.objects.filter((o) => named.has(objectId(o)) || before.get(objectId(o)) !== canonical(o));
}

/**
 * The resulting objects the input touches as a `v1` List, in YAML or JSON, and beside them (`refused`, always
 * there) each refused input: where it is (`source`, and `line`: the refused field's, else where the object
 * starts), who refused it (`by`), the words (`message`, and `causes` when there are several, at most
 * {@linkcode MAX_CAUSES} and a count of the rest), and the object as written. A Secret's `data` and `stringData`
 * values are `***` everywhere, and every other string has them replaced too; live objects the plan leaves
 * untouched are left out, so a later `--live` reads back `items` beside the earlier `--live` files.
 */
export function renderObjects(result: PlanResult, format: "yaml" | "json"): string {
  const refused = result.outcomes.filter((o) => o.action === "refused").map((o) => ({
    source: o.source,
    ...(o.line ?? o.at ? { line: o.line ?? o.at } : {}),
    name: o.name,
    by: o.refusal?.by,
    message: boundedMessage(o.refusal?.message, o.refusal?.causes),
    ...(o.refusal?.causes ? { causes: boundedCauses(o.refusal.causes) } : {}),
    object: maskSecret(o.input),
  }));
  const list = redactDeep(
    { apiVersion: "v1", kind: "List", items: touched(result).map(maskSecret), refused },
    secretsOf(result),
  );
  return escapeQuoted(format === "json" ? JSON.stringify(list, null, 2) + "\n" : safeYaml(list));
}

/**
 * YAML of a value whose strings a repository wrote: no block scalars (a line of one could start with `::error`),
 * and a string with a character a terminal acts on, or that starts like a runner command, double-quoted (where
 * {@linkcode escapeQuoted} can escape what is left raw).
 */
function safeYaml(value: unknown): string {
  const doc = new Document(value);
  visit(doc, {
    Scalar(_, node) {
      if (typeof node.value === "string" && needsQuoting(node.value)) node.type = Scalar.QUOTE_DOUBLE;
    },
  });
  return doc.toString({ lineWidth: 0, blockQuote: false, doubleQuotedAsJSON: true });
}

/** Server bookkeeping left out of a diff. */
const NOT_DIFFED = new Set(["metadata.resourceVersion", "metadata.generation", "metadata.managedFields"]);

function leaves(value: unknown, path: string, out: Map<string, string>): void {
  if (NOT_DIFFED.has(path)) return;
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value)
      ? value.map((v, i) => [`[${i}]`, v] as const)
      : Object.entries(value).map(([k, v]) =>
        [/^[A-Za-z_][\w-]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`, v] as const
      );
    if (!entries.length) out.set(path, Array.isArray(value) ? "[]" : "{}");
    for (const [k, v] of entries) leaves(v, path ? `${path}${k}` : k.replace(/^\./, ""), out);
    return;
  }
  if (value !== undefined) out.set(path, JSON.stringify(value));
}

/**
 * What the plan changes against the live objects it started from: `+` created, `-` deleted, `~` changed with
 * one line per changed field (`path: before -> after`). A Secret's values are masked as `kubectl diff` masks
 * them: `"*** (before)" -> "*** (after)"` where a value changes.
 */
export function renderDiff(result: PlanResult): string {
  const redact = secretsOf(result);
  return diffLines(result).map((l) => `${safeLine(redact(l))}\n`).join("");
}

function diffLines(result: PlanResult): string[] {
  const before = new Map(result.live.map((o) => [objectId(o), o]));
  const after = new Map(result.objects.map((o) => [objectId(o), o]));
  const ids = [...new Set([...before.keys(), ...after.keys()])].sort();
  const lines: string[] = [];
  for (const id of ids) {
    const a = before.get(id);
    const b = after.get(id);
    if (!a) {
      lines.push(`+ ${describe(b!)}`);
      continue;
    }
    if (!b) {
      lines.push(`- ${describe(a)}`);
      continue;
    }
    if (canonical(a) === canonical(b)) continue;
    const from = new Map<string, string>();
    const to = new Map<string, string>();
    const [maskedA, maskedB] = maskSecretPair(a, b);
    leaves(maskedA, "", from);
    leaves(maskedB, "", to);
    const changed = [...new Set([...from.keys(), ...to.keys()])].sort()
      .filter((p) => from.get(p) !== to.get(p))
      .map((p) => `    ${p}: ${from.get(p) ?? "(none)"} -> ${to.get(p) ?? "(none)"}`);
    if (changed.length) lines.push(`~ ${describe(b)}`, ...changed);
  }
  return lines.length ? lines : ["No changes against the live objects."];
}
