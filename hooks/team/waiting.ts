/**
 * The Team's judgement of its TenantClusters waiting to start (`status.admission`): the TenantCluster module's
 * {@linkcode judgeWaiting} over the clusters and ProviderConfigs this Team's sync was given.
 *
 * @module
 */
import { z } from "zod";
import { KINDS } from "../../lib/butler/mod.ts";
import { type CompositeRequest, readGroup } from "../../lib/contract/mod.ts";
import {
  ProviderConfigSpec,
  providerKey,
  recordedProviderRef,
  resolveProviderRef,
  type TeamAdmission,
  type TeamSpec,
} from "../../lib/api/mod.ts";
import { type JudgedCluster, judgeWaiting } from "../tenantcluster/holds.ts";

/** A ProviderConfig as the judgement reads it: its name and spec (its limits, the key clusters count on). */
const ProviderConfigObject = z.looseObject({
  metadata: z.looseObject({ name: z.string() }),
  spec: ProviderConfigSpec,
});

/**
 * The Team's `status.admission`: its waiting clusters admitted or held ({@linkcode judgeWaiting}), each counted
 * on the provider it resolves to (its own, the Team default it was given, or the Team's default).
 */
export function waitingAdmission(
  request: CompositeRequest,
  name: string,
  namespace: string,
  spec: TeamSpec,
  clusters: readonly JudgedCluster[],
): TeamAdmission {
  const entries = readGroup(request.related, KINDS.ProviderConfig, ProviderConfigObject);
  const exists = new Set(entries.map((e) => e.key));
  const providers = new Map(
    entries.flatMap((e) =>
      e.ok ? [[e.key, { name: e.value.metadata.name, spec: e.value.spec }] as const] : []
    ),
  );
  return judgeWaiting({
    namespace,
    teamName: name,
    team: spec,
    clusters,
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
