import { KINDS } from "../../lib/butler/mod.ts";
import { type CompositeRequest, type CompositeResponse, groupKey } from "../../lib/contract/mod.ts";
import type { HookContext } from "../../lib/hook_context/mod.ts";
import type { Signal } from "../../lib/signals/mod.ts";
import { parseTime } from "../../lib/time/mod.ts";
import { InventorySpec, IpamMemory } from "../../lib/api/mod.ts";
import { inventoryAgeLimit } from "./elastic.ts";

/**
 * The signal of a TenantCluster sync: how old its LoadBalancerInventory was (the reporter's lag as the hook saw
 * it) and the age past which the hook stops deciding, when the cluster reads its demand (elastic IPAM, shown by
 * its `ElasticIPAM` condition); `gone` once finalized.
 */
export function tenantClusterSignals(
  request: CompositeRequest,
  response: CompositeResponse,
  context: HookContext,
): Signal[] {
  const { name, namespace = "" } = request.parent.metadata;
  if (response.finalized) return [{ signal: "inventory", namespace, name, gone: true }];
  const conditions = (response.status as { conditions?: { type?: unknown }[] } | undefined)?.conditions ?? [];
  if (!conditions.some((c) => c.type === "ElasticIPAM")) return [];
  const inventory = InventorySpec.safeParse(
    (request.related[groupKey(KINDS.LoadBalancerInventory)]?.[`${namespace}/${name}`] as { spec?: unknown })
      ?.spec,
  );
  const at = inventory.success ? parseTime(inventory.data.observedAt) : undefined;
  if (!inventory.success || !at) return [];
  const memory = IpamMemory.parse((request.parent.status as { ipam?: unknown } | undefined)?.ipam ?? {});
  const ageSeconds = Math.max(0, (context.now.getTime() - at.getTime()) / 1000);
  const maxAgeSeconds = inventoryAgeLimit(
    inventory.data.services,
    memory.unusedSince,
    context.now,
    context.config.shrinkGraceSeconds,
  );
  return [{ signal: "inventory", namespace, name, ageSeconds, maxAgeSeconds }];
}
