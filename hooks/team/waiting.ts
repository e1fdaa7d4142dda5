/**
 * The Team's judgement of its TenantClusters' claims (`status.admission`): the TenantCluster module's
 * {@linkcode judgeClaims} over the clusters, their quota records and the ProviderConfigs this Team's sync was given.
 *
 * @module
 */
import { z } from "zod";
import { KINDS } from "../../lib/butler/mod.ts";
import { type CompositeRequest, readGroup } from "../../lib/contract/mod.ts";
import {
  ObservedCluster,
  ProviderConfigSpec,
  providerKey,
  recordedProviderRef,
  resolveProviderRef,
  type TeamAdmission,
  type TeamSpec,
} from "../../lib/api/mod.ts";
import { judgeClaims, type JudgedCluster } from "../tenantcluster/holds.ts";
import { CONFIGMAP } from "../tenantcluster/metallb.ts";
import { type ObservedRecord, readRecord, recordName } from "../tenantcluster/record.ts";

/** A ProviderConfig as the judgement reads it: its name and spec (its limits, the key clusters count on). */
const ProviderConfigObject = z.looseObject({
  metadata: z.looseObject({ name: z.string() }),
  spec: ProviderConfigSpec,
});

/**
 * The quota records of the team namespace, by the UID of the cluster that owns each: a record counts only for the
 * cluster that controls it and whose name it bears (a record left by an earlier cluster of that name is not its).
 */
function recordsOf(request: CompositeRequest, namespace: string): Map<string, ObservedRecord> {
  const records = new Map<string, ObservedRecord>();
  for (
    const [key, raw] of Object.entries(request.related[`${CONFIGMAP.kind}.${CONFIGMAP.apiVersion}`] ?? {})
  ) {
    if (!key.startsWith(`${namespace}/`)) continue;
    const r = readRecord(raw);
    if (r?.owner) records.set(r.owner, r);
  }
  return records;
}

/**
 * The TenantClusters of the team namespace as the judgement counts them: every one, those whose spec does not read
 * too (what its record holds still counts; one started before it had a record counts as its status last
 * resolved it).
 */
function judgedClusters(request: CompositeRequest, namespace: string): JudgedCluster[] {
  const group = request.related[`${KINDS.TenantCluster.kind}.${KINDS.TenantCluster.apiVersion}`] ?? {};
  return Object.keys(group).sort().flatMap((key) => {
    const raw = group[key] as { metadata?: unknown; spec?: unknown; status?: unknown };
    const m = JudgedMetadata.safeParse(raw?.metadata);
    if (!key.startsWith(`${namespace}/`) || !m.success) return [];
    const spec = ClusterSpec.safeParse(raw.spec);
    return [{ metadata: m.data, ...(spec.success ? { spec: spec.data } : {}), status: raw.status }];
  });
}

/** The metadata the judgement reads; a part that does not read is left out. */
const JudgedMetadata = z.object({
  name: z.string(),
  uid: z.string().optional().catch(undefined),
  creationTimestamp: z.string().nullable().optional().catch(undefined),
  deletionTimestamp: z.string().nullable().optional().catch(undefined),
  labels: z.record(z.string(), z.string()).nullable().optional().catch(undefined),
  annotations: z.record(z.string(), z.string()).nullable().optional().catch(undefined),
});
const ClusterSpec = ObservedCluster.shape.spec.unwrap();

/**
 * The Team's `status.admission`: its clusters' claims admitted or held ({@linkcode judgeClaims}), each cluster
 * without a record counted on the provider it resolves to (its own, the Team default it was given, or the Team's
 * default).
 */
export function claimsAdmission(
  request: CompositeRequest,
  name: string,
  namespace: string,
  spec: TeamSpec,
): TeamAdmission {
  const clusters = judgedClusters(request, namespace);
  const entries = readGroup(request.related, KINDS.ProviderConfig, ProviderConfigObject);
  const exists = new Set(entries.map((e) => e.key));
  const providers = new Map(
    entries.flatMap((e) =>
      e.ok ? [[e.key, { name: e.value.metadata.name, spec: e.value.spec }] as const] : []
    ),
  );
  const all = recordsOf(request, namespace);
  const records = new Map(
    clusters.flatMap((c) => {
      const r = c.metadata?.uid ? all.get(c.metadata.uid) : undefined;
      return r && r.name === recordName(c.metadata?.name ?? "") ? [[c.metadata!.uid!, r] as const] : [];
    }),
  );
  return judgeClaims({
    namespace,
    teamName: name,
    team: spec,
    clusters,
    records,
    providers,
    providerOf: (c) => {
      const choice = resolveProviderRef(
        namespace,
        c.spec,
        { team: name, defaultName: spec.providerConfigRef?.name },
        (ref) => exists.has(providerKey(ref)),
        recordedProviderRef(c.status),
      );
      return choice && providerKey(choice.ref);
    },
  });
}
