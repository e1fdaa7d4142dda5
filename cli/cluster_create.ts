/**
 * `kubectl butler cluster create`: the seeds' `butlerctl cluster --environment`. Builds the TenantCluster (its
 * environment label, the caller as `creator-email`, only the fields given), and shows the shape it will get, each
 * value with its source, resolved by the same function the controller and admission use (`resolveTeamShape`), and
 * the ProviderConfig it will use (`resolveProviderRef`). Pure: flags and the Team in, the object and text out.
 *
 * @module
 */
import { type ProviderRef, resolveProviderRef, teamNamespace, type TeamSpec } from "../lib/api/mod.ts";
import { API_VERSION, CREATOR_ANNOTATION, LABELS } from "../lib/butler/mod.ts";
import { parseQuantity } from "../lib/quantity/mod.ts";
import { resolveTeamShape } from "../lib/shape/mod.ts";

/** What the caller asked for. */
export interface ClusterRequest {
  readonly name: string;
  readonly team: string;
  readonly environment?: string;
  readonly version?: string;
  readonly workers?: number;
  readonly cpu?: string;
  readonly memory?: string;
  readonly disk?: string;
  readonly provider?: string;
  /** The caller's username (a SelfSubjectReview): the cluster's `creator-email`. */
  readonly creator: string;
}

/** The quantity flags that are wrong, as messages naming the flag; empty when all read. */
export function quantityProblems(request: Pick<ClusterRequest, "cpu" | "memory" | "disk">): string[] {
  return (["cpu", "memory", "disk"] as const).flatMap((flag) => {
    const v = request[flag];
    if (v === undefined) return [];
    const q = parseQuantity(v);
    return q.ok && q.value.nanos > 0n
      ? []
      : [`--${flag} must be a positive quantity (e.g. 4, 16Gi), not "${v}"`];
  });
}

/**
 * The TenantCluster to create: in the team namespace, labelled with its environment, annotated with its creator,
 * with only the fields given (the rest come from defaults, as for any cluster).
 */
export function clusterObject(r: ClusterRequest): Record<string, unknown> {
  const template = {
    ...(r.cpu !== undefined ? { cpu: r.cpu } : {}),
    ...(r.memory !== undefined ? { memory: r.memory } : {}),
    ...(r.disk !== undefined ? { diskSize: r.disk } : {}),
  };
  const workers = {
    ...(r.workers !== undefined ? { replicas: r.workers } : {}),
    ...(Object.keys(template).length ? { machineTemplate: template } : {}),
  };
  return {
    apiVersion: API_VERSION,
    kind: "TenantCluster",
    metadata: {
      name: r.name,
      namespace: teamNamespace(r.team),
      ...(r.environment ? { labels: { [LABELS.environment]: r.environment } } : {}),
      annotations: { [CREATOR_ANNOTATION]: r.creator },
    },
    spec: {
      ...(r.version !== undefined ? { kubernetesVersion: r.version } : {}),
      ...(r.provider !== undefined ? { providerConfigRef: { name: r.provider } } : {}),
      ...(Object.keys(workers).length ? { workers } : {}),
    },
  };
}

/** One line of the preview: a field, its value, where it comes from. */
export interface PreviewRow {
  readonly field: string;
  readonly value: string;
  readonly source: string;
}

/**
 * The shape and the ProviderConfig the cluster will get. `exists` says whether a ProviderConfig is there (the
 * Team default is looked for in the team namespace, then butler-system, as the controller does).
 */
export function preview(
  r: ClusterRequest,
  team: TeamSpec,
  exists: (ref: ProviderRef) => boolean,
): PreviewRow[] {
  const object = clusterObject(r) as { spec: Parameters<typeof resolveTeamShape>[0] };
  const { shape } = resolveTeamShape(object.spec, r.environment, team);
  const provider = resolveProviderRef(
    teamNamespace(r.team),
    object.spec,
    { team: r.team, defaultName: team.providerConfigRef?.name },
    exists,
  );
  return [
    ...(shape.kubernetesVersion
      ? [{
        field: "kubernetesVersion",
        value: shape.kubernetesVersion.value,
        source: shape.kubernetesVersion.source,
      }]
      : [{ field: "kubernetesVersion", value: "(none)", source: "required: give --version" }]),
    { field: "workers", value: String(shape.workerCount.value), source: shape.workerCount.source },
    { field: "cpu per worker", value: shape.workerCPU.value, source: shape.workerCPU.source },
    { field: "memory per worker", value: shape.workerMemory.value, source: shape.workerMemory.source },
    { field: "disk per worker", value: shape.workerDisk.value, source: shape.workerDisk.source },
    ...(shape.addons.value.length
      ? [{ field: "addons", value: shape.addons.value.join(", "), source: shape.addons.source }]
      : []),
    provider
      ? {
        field: "providerConfig",
        value: `${provider.ref.namespace}/${provider.ref.name}`,
        source: provider.source === "explicit" ? "explicit" : "team default",
      }
      : { field: "providerConfig", value: "(none)", source: "the team names no default: give --provider" },
  ];
}

/** The preview as text: the cluster, then a line per field. */
export function renderPreview(r: ClusterRequest, rows: readonly PreviewRow[]): string {
  const width = Math.max(...rows.map((row) => row.field.length));
  const valueWidth = Math.max(...rows.map((row) => row.value.length));
  return [
    `TenantCluster ${teamNamespace(r.team)}/${r.name}${
      r.environment ? ` in environment ${r.environment}` : ""
    }, created by ${r.creator}:`,
    ...rows.map((row) => `  ${row.field.padEnd(width)}  ${row.value.padEnd(valueWidth)}  (${row.source})`),
  ].join("\n") + "\n";
}
