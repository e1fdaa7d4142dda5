import { KINDS } from "../../lib/butler/mod.ts";
import { type CompositeRequest, type CompositeResponse, groupKey } from "../../lib/contract/mod.ts";
import type { HookContext } from "../../lib/hook/mod.ts";
import type { Signal } from "../../lib/signals/mod.ts";
import { parseTime } from "../../lib/time/mod.ts";

/**
 * The signal of a TenantCluster sync: how old its LoadBalancerInventory was (the reporter's lag as the hook saw
 * it), when it has one; `gone` once finalized.
 */
export function tenantClusterSignals(
  request: CompositeRequest,
  response: CompositeResponse,
  context: HookContext,
): Signal[] {
  const { name, namespace = "" } = request.parent.metadata;
  if (response.finalized) return [{ signal: "inventory", namespace, name, gone: true }];
  const inventory = request.related[groupKey(KINDS.LoadBalancerInventory)]?.[`${namespace}/${name}`] as
    | { spec?: { observedAt?: unknown } }
    | undefined;
  const at = typeof inventory?.spec?.observedAt === "string"
    ? parseTime(inventory.spec.observedAt)
    : undefined;
  if (!at) return [];
  const ageSeconds = Math.max(0, (context.now.getTime() - at.getTime()) / 1000);
  return [{ signal: "inventory", namespace, name, ageSeconds }];
}
