/**
 * The tenants `test:upgrade` keeps through an upgrade and back: a pool with its provider, Teams, TenantClusters
 * and Cluster API claims (objects every release since 0.1.0 accepts), what their addresses are, and waiting until
 * every Butler object has converged.
 *
 * @module
 */
import { kubectl, kubectlOk } from "../api/cluster.ts";
import { eventually } from "../e2e/wait.ts";

// deno-lint-ignore no-explicit-any
export type Obj = Record<string, any>;

/** The churn's Team namespace and Cluster API namespace. */
export const CHURN_TEAM = "upgrade";
export const CAPI_NS = "capi-upgrade";

/** A TenantCluster of the provider harvester-lab. */
export function tenantCluster(name: string, namespace: string): Obj {
  return {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "TenantCluster",
    metadata: { name, namespace },
    spec: {
      providerConfigRef: { name: "harvester-lab" },
      kubernetesVersion: "v1.31.0",
      workers: { replicas: 2, machineTemplate: { cpu: 2, memory: "4Gi", diskSize: "20Gi" } },
    },
  };
}

/** An IPAddressClaim on node-pool. */
export function claim(name: string): Obj {
  return {
    apiVersion: "ipam.cluster.x-k8s.io/v1beta2",
    kind: "IPAddressClaim",
    metadata: { name, namespace: CAPI_NS },
    spec: {
      clusterName: "upgrade",
      poolRef: { apiGroup: "butler.butlerlabs.dev", kind: "NetworkPool", name: "node-pool" },
    },
  };
}

/** Creates the steady tenants: the pool and provider, Teams platform and upgrade, three clusters, five claims. */
export async function createTenants(): Promise<void> {
  await kubectlOk([
    "create",
    "secret",
    "generic",
    "harvester-kubeconfig",
    "-n",
    "butler-system",
    "--from-literal=kubeconfig=apiVersion: v1",
  ]);
  await kubectlOk([
    "apply",
    "--server-side",
    "-f",
    "examples/ipam/single-pool/",
    "-f",
    "examples/teams/platform.yaml",
  ]);
  const team = {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "Team",
    metadata: { name: CHURN_TEAM },
    spec: { displayName: "Upgrade churn", access: { users: [{ name: "u@example.com", role: "admin" }] } },
  };
  await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: JSON.stringify(team) });
  await kubectlOk(["create", "namespace", CAPI_NS]);
  const pool = {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "NetworkPool",
    metadata: { name: "node-pool", namespace: CAPI_NS },
    spec: { cidr: "10.80.0.0/24", gateway: "10.80.0.1", prefix: 24 },
  };
  await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: JSON.stringify(pool) });
  await eventually("namespaces of the Teams", async () => {
    const r = await kubectl(["get", "namespace", "team-platform", `team-${CHURN_TEAM}`]);
    return r.code === 0 ? true : undefined;
  }, 120);
  const steady = [
    ...["prod-a", "prod-b", "prod-c"].map((n) => tenantCluster(n, "team-platform")),
    ...[0, 1, 2, 3, 4].map((i) => claim(`steady-${i}`)),
  ];
  await kubectlOk(["create", "-f", "-"], { stdin: steady.map((o) => JSON.stringify(o)).join("\n") });
}

async function items(resource: string): Promise<Obj[]> {
  return JSON.parse(await kubectlOk(["get", resource, "-A", "-o", "json"])).items;
}

/** Every address held, by holder: IPAllocations' ranges, IPAddresses, TenantClusters' LoadBalancer ranges. */
export async function addresses(): Promise<Map<string, string>> {
  const held = new Map<string, string>();
  for (const a of await items("ipallocations.butler.butlerlabs.dev")) {
    if (a.status?.phase === "Allocated") {
      held.set(
        `IPAllocation ${a.metadata.namespace}/${a.metadata.name}`,
        `${a.status.startAddress}-${a.status.endAddress}`,
      );
    }
  }
  for (const a of await items("ipaddresses.ipam.cluster.x-k8s.io")) {
    held.set(`IPAddress ${a.metadata.namespace}/${a.metadata.name}`, a.spec.address);
  }
  for (const c of await items("tenantclusters.butler.butlerlabs.dev")) {
    const lb = c.status?.loadBalancer?.addresses;
    if (lb?.length) held.set(`TenantCluster ${c.metadata.namespace}/${c.metadata.name}`, lb.join(","));
  }
  return held;
}

const ready = (o: Obj) =>
  (o.status?.conditions ?? []).some((c: Obj) => c.type === "Ready" && c.status === "True") &&
  (o.status?.observedGeneration === undefined || o.status.observedGeneration === o.metadata.generation);

/**
 * Touches every Butler object (an annotation: each is synced again by whatever hook service now answers) and
 * waits until each is Ready for its generation, every IPAllocation Allocated and every claim answered.
 */
export async function converge(label: string, seconds = 240): Promise<void> {
  for (const kind of ["teams", "providerconfigs", "networkpools", "tenantclusters", "ipallocations"]) {
    await kubectlOk([
      "annotate",
      `${kind}.butler.butlerlabs.dev`,
      "--all",
      "-A",
      "--overwrite",
      `upgrade.test/at=${label}`,
    ]);
  }
  await eventually(
    `every Butler object Ready (${label})`,
    async () => {
      const waiting: string[] = [];
      for (const kind of ["teams", "providerconfigs", "networkpools", "tenantclusters"]) {
        for (const o of await items(`${kind}.butler.butlerlabs.dev`)) {
          if (!o.metadata.deletionTimestamp && !ready(o)) waiting.push(`${kind} ${o.metadata.name}`);
        }
      }
      for (const a of await items("ipallocations.butler.butlerlabs.dev")) {
        if (!a.metadata.deletionTimestamp && a.status?.phase !== "Allocated") {
          waiting.push(
            `ipallocation ${a.metadata.name}`,
          );
        }
      }
      for (const c of await items("ipaddressclaims.ipam.cluster.x-k8s.io")) {
        if (!c.metadata.deletionTimestamp && !c.status?.addressRef?.name) {
          waiting.push(
            `claim ${c.metadata.name}`,
          );
        }
      }
      if (waiting.length) throw new Error(`not yet: ${waiting.slice(0, 8).join(", ")}`);
      return true;
    },
    seconds,
    2000,
  );
}

/** Waits until none of `names` (`Kind/name` of the churn) exists: nothing held by a finalizer. */
export async function gone(names: readonly string[], seconds = 180): Promise<void> {
  await eventually(
    `${names.length} deleted objects gone`,
    async () => {
      const left = new Set([
        ...(await items("tenantclusters.butler.butlerlabs.dev")).map((o) =>
          `TenantCluster/${o.metadata.name}`
        ),
        ...(await items("ipaddressclaims.ipam.cluster.x-k8s.io")).map((o) =>
          `IPAddressClaim/${o.metadata.name}`
        ),
      ]);
      const stuck = names.filter((n) => left.has(n));
      if (stuck.length) throw new Error(`still there: ${stuck.slice(0, 8).join(", ")}`);
      return true;
    },
    seconds,
    2000,
  );
}
