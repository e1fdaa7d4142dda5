/**
 * `kubectl butler env migrate`: moves TenantClusters to another environment the way the seeds' contract says,
 * one update that sets the environment label and the migration annotation together, then one that removes the
 * annotation (a leftover one permits nothing, but says the migration did not finish). What admission decides is
 * asked of admission itself: `--dry-run` sends the same update as a server-side dry run, so the API server's
 * policies and Butler's webhooks answer exactly as they will for the real one, and nothing is written.
 *
 * @module
 */
import { butlerPath, LABELS, MIGRATION_ANNOTATION } from "../lib/butler/mod.ts";
import { teamNameOf } from "../lib/api/mod.ts";
import { KubeApiError, type KubeClient } from "../lib/kube/mod.ts";
import { type Colour, type Paint, plain } from "./colour.ts";
import { refusal } from "./command.ts";

/** The fields of a TenantCluster this command reads and writes. */
export interface ClusterObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  spec?: unknown;
  [key: string]: unknown;
}

/** What happened to one cluster. */
export interface MigrationResult {
  readonly namespace: string;
  readonly name: string;
  /** The environment it was in (`undefined`: no environment label). */
  readonly from?: string;
  readonly to: string;
  /**
   * `moved` (or, in a dry run, would be); `unchanged` (already there); `refused` by admission or RBAC; `notFound`;
   * `incomplete`: moved, but the annotation could not be removed; `failed`: the API could not be reached.
   */
  readonly outcome: "moved" | "unchanged" | "refused" | "notFound" | "incomplete" | "failed";
  /** The API server's words for a refusal or a failure. */
  readonly message?: string;
}

/**
 * The update that moves `cluster` to `to`: the label and the migration annotation set together, every other
 * field as stored (its resourceVersion is the precondition). `undefined` when it is already there.
 *
 * @example
 * ```ts
 * migrationUpdate({ metadata: { name: "c1", namespace: "team-a", labels: {} } }, "prod");
 * // { metadata: { ..., labels: { "butler.butlerlabs.dev/environment": "prod" },
 * //   annotations: { "butler.butlerlabs.dev/migration-operation": "true" } } }
 * ```
 */
export function migrationUpdate(cluster: ClusterObject, to: string): ClusterObject | undefined {
  if (cluster.metadata.labels?.[LABELS.environment] === to) return undefined;
  return {
    ...cluster,
    metadata: {
      ...cluster.metadata,
      labels: { ...cluster.metadata.labels, [LABELS.environment]: to },
      annotations: { ...cluster.metadata.annotations, [MIGRATION_ANNOTATION]: "true" },
    },
  };
}

/**
 * The stored cluster without the migration annotation: the second update of a migration.
 *
 * @example
 * ```ts
 * withoutMigrationAnnotation(stored).metadata.annotations; // every annotation but migration-operation
 * ```
 */
export function withoutMigrationAnnotation(cluster: ClusterObject): ClusterObject {
  const { [MIGRATION_ANNOTATION]: _, ...annotations } = cluster.metadata.annotations ?? {};
  return { ...cluster, metadata: { ...cluster.metadata, annotations } };
}

/** Which clusters of a listing a bulk migration takes. */
export interface Selection {
  /** Only clusters of this Team (`spec.teamRef`, else the `team-{name}` namespace they are in). */
  readonly team: string;
  /** Only clusters without an environment label. */
  readonly unlabelled?: boolean;
}

/**
 * The clusters of `items` a bulk migration takes, sorted by namespace and name. The label selector is applied
 * by the API server when listing; the Team and `--unlabelled` here.
 *
 * @example
 * ```ts
 * selectClusters(items, { team: "payments", unlabelled: true }); // payments' clusters with no environment
 * ```
 */
export function selectClusters(items: readonly ClusterObject[], selection: Selection): ClusterObject[] {
  return items
    .filter((c) => teamNameOf(c.metadata.namespace, c.spec) === selection.team)
    .filter((c) => !selection.unlabelled || c.metadata.labels?.[LABELS.environment] === undefined)
    .sort((a, b) =>
      a.metadata.namespace === b.metadata.namespace
        ? (a.metadata.name < b.metadata.name ? -1 : 1)
        : (a.metadata.namespace < b.metadata.namespace ? -1 : 1)
    );
}

/** How many times a migration starts over when the cluster changed under it (409). */
const CONFLICT_ATTEMPTS = 3;

/**
 * Migrates one cluster: reads it, sends the migration update (a server-side dry run with `dryRun`), and then
 * removes the annotation. A conflict starts over from a fresh read. Never throws: the outcome says what happened.
 */
export async function migrateCluster(
  kube: KubeClient,
  target: { namespace: string; name: string },
  to: string,
  dryRun: boolean,
): Promise<MigrationResult> {
  const base = { namespace: target.namespace, name: target.name, to };
  const path = butlerPath("tenantclusters", target.namespace, target.name);
  for (let attempt = 1;; attempt++) {
    let stored: ClusterObject | undefined;
    try {
      stored = await kube.get(path) as ClusterObject | undefined;
    } catch (err) {
      return { ...base, ...failure(err) };
    }
    if (!stored) return { ...base, outcome: "notFound", message: "not found" };
    const from = stored.metadata.labels?.[LABELS.environment];
    const update = migrationUpdate(stored, to);
    if (!update) return { ...base, from, outcome: "unchanged" };
    let moved: ClusterObject;
    try {
      moved = await kube.write("PUT", dryRun ? `${path}?dryRun=All` : path, update) as ClusterObject;
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 409 && attempt < CONFLICT_ATTEMPTS) continue;
      return { ...base, from, ...failure(err) };
    }
    if (dryRun) return { ...base, from, outcome: "moved" };
    try {
      await kube.write("PUT", path, withoutMigrationAnnotation(moved));
    } catch (err) {
      return {
        ...base,
        from,
        outcome: "incomplete",
        message: `moved, but the ${MIGRATION_ANNOTATION} annotation was not removed (${
          failure(err).message
        }); remove it: kubectl annotate tenantcluster ${target.name} -n ${target.namespace} ${MIGRATION_ANNOTATION}-`,
      };
    }
    return { ...base, from, outcome: "moved" };
  }
}

/** A refusal (the API answered 4xx) or a failure (no answer, 5xx), in the API server's words. */
function failure(err: unknown): { outcome: "refused" | "failed"; message: string } {
  const refused = refusal(err);
  if (refused !== undefined) return { outcome: "refused", message: refused };
  if (err instanceof KubeApiError) {
    return { outcome: "failed", message: err.detail || `${err.status} ${err.reason}` };
  }
  return { outcome: "failed", message: err instanceof Error ? err.message : String(err) };
}

/**
 * Migrates clusters one after another (a refusal of one does not stop the others), in the order given.
 */
export async function migrateClusters(
  kube: KubeClient,
  targets: readonly { namespace: string; name: string }[],
  to: string,
  dryRun: boolean,
): Promise<MigrationResult[]> {
  const results: MigrationResult[] = [];
  for (const target of targets) results.push(await migrateCluster(kube, target, to, dryRun));
  return results;
}

const VERB: Record<MigrationResult["outcome"], [string, string]> = {
  moved: ["moved", "would move"],
  unchanged: ["already there", "already there"],
  refused: ["refused", "would be refused"],
  notFound: ["not found", "not found"],
  incomplete: ["moved, annotation left", "moved, annotation left"],
  failed: ["failed", "failed"],
};

const OUTCOME_COLOURS: Record<MigrationResult["outcome"], Colour> = {
  moved: "green",
  unchanged: "green",
  refused: "red",
  notFound: "red",
  incomplete: "yellow",
  failed: "red",
};

/**
 * The results as text: a line per cluster and a summary line.
 *
 * @example
 * ```ts
 * formatResults([{ namespace: "team-a", name: "c1", from: "dev", to: "prod", outcome: "moved" }], false);
 * // "team-a/c1: dev -> prod: moved\nmoved 1 of 1 cluster(s) to prod\n"
 * ```
 */
export function formatResults(
  results: readonly MigrationResult[],
  dryRun: boolean,
  paint: Paint = plain,
): string {
  const lines = results.map((r) =>
    `${r.namespace}/${r.name}: ${r.from ?? "(no environment)"} -> ${r.to}: ${
      paint(VERB[r.outcome][dryRun ? 1 : 0], OUTCOME_COLOURS[r.outcome])
    }${r.message && r.outcome !== "notFound" ? `: ${r.message}` : ""}`
  );
  const count = (o: MigrationResult["outcome"]) => results.filter((r) => r.outcome === o).length;
  const to = results[0]?.to ?? "";
  const others = (["unchanged", "refused", "notFound", "incomplete", "failed"] as const)
    .filter((o) => count(o) > 0).map((o) => `${count(o)} ${VERB[o][dryRun ? 1 : 0]}`);
  const summary = results.length === 0
    ? "no cluster selected"
    : `${dryRun ? "would move" : "moved"} ${count("moved")} of ${results.length} cluster(s) to ${to}${
      others.length ? `; ${others.join(", ")}` : ""
    }`;
  return [...lines, summary].join("\n") + "\n";
}

/** Whether every cluster ended where it was asked to be (the exit code is 0 only then). */
export function allMoved(results: readonly MigrationResult[]): boolean {
  return results.every((r) => r.outcome === "moved" || r.outcome === "unchanged");
}
