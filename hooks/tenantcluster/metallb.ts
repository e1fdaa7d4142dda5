import { stringify } from "yaml";
import { LABELS } from "../../lib/butler/mod.ts";
import { buildObject, type KubeObject } from "../../lib/contract/mod.ts";
import { metallbObjects } from "../../lib/metallb/mod.ts";

/** The ConfigMap child type, as declared in the CompositeController. */
export const CONFIGMAP = { apiVersion: "v1", kind: "ConfigMap" } as const;
/** The data key holding the MetalLB manifests. */
export const METALLB_KEY = "metallb.yaml";

/**
 * The MetalLB projection: a ConfigMap `{tc}-metallb` whose `metallb.yaml` holds the `IPAddressPool default-pool`
 * (one `start-end` per Allocated LB allocation, in address order) and the `L2Advertisement default` for namespace
 * `metallb-system`, in the form Cluster API's ClusterResourceSet (strategy Reconcile) applies to the workload
 * cluster; the reporter applies the same objects to the tenant (lib/metallb).
 */
export function metallbConfigMap(tc: string, namespace: string, addresses: readonly string[]): KubeObject {
  const [pool, l2] = metallbObjects(addresses).map((o) => o.body);
  return buildObject(CONFIGMAP, {
    name: `${tc}-metallb`,
    namespace,
    labels: { [LABELS.team]: namespace, [LABELS.tenant]: tc, [LABELS.managedBy]: "butler" },
  }, { data: { [METALLB_KEY]: `${stringify(pool)}---\n${stringify(l2)}` } });
}
