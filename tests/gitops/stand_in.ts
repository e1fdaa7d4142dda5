/**
 * What the test control plane lacks, played for the objects Argo CD syncs into butler-system: no kubelet, no
 * deployment, replica set or disruption controller and no cert-manager run here, and the hook service runs as a
 * local process (the shipped command line), not as the Deployment's pods. So once Argo CD has applied them, this
 * stand-in writes the status those would write: a Deployment rolled out with every replica available, a
 * PodDisruptionBudget with its pods healthy, a Certificate and an Issuer Ready (the Secrets cert-manager would
 * issue are made from the test PKI before the sync). Nothing else is written: every other health Argo CD shows
 * is its own reading of what the API server, Metacontroller and the hooks did.
 *
 * @module
 */
import { kubectl } from "../api/cluster.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const NOW = () => new Date().toISOString().replace(/\.\d+Z$/, "Z");

/** The status each kind's absent controller would write for `o`. */
const STATUS: Record<string, (o: Obj) => Obj> = {
  deployments: (o) => {
    const n = o.spec.replicas ?? 1;
    return {
      observedGeneration: o.metadata.generation,
      replicas: n,
      updatedReplicas: n,
      readyReplicas: n,
      availableReplicas: n,
      conditions: [
        { type: "Available", status: "True", reason: "MinimumReplicasAvailable", lastTransitionTime: NOW() },
        { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable", lastTransitionTime: NOW() },
      ],
    };
  },
  poddisruptionbudgets: (o) => ({
    observedGeneration: o.metadata.generation,
    currentHealthy: 2,
    desiredHealthy: 1,
    expectedPods: 2,
    disruptionsAllowed: 1,
    conditions: [{
      type: "DisruptionAllowed",
      status: "True",
      reason: "SufficientPods",
      message: "",
      lastTransitionTime: NOW(),
      observedGeneration: o.metadata.generation,
    }],
  }),
  "certificates.cert-manager.io": () => ({
    conditions: [{
      type: "Ready",
      status: "True",
      reason: "Ready",
      message: "Certificate is up to date and has not expired",
      lastTransitionTime: NOW(),
    }],
  }),
  "issuers.cert-manager.io": () => ({
    conditions: [{
      type: "Ready",
      status: "True",
      reason: "KeyPairVerified",
      message: "Signing CA verified",
      lastTransitionTime: NOW(),
    }],
  }),
};

/** Whether `o`'s status already says what the stand-in would write (so it writes once per generation). */
function written(resource: string, o: Obj): boolean {
  if (resource === "deployments" || resource === "poddisruptionbudgets") {
    return o.status?.observedGeneration === o.metadata.generation;
  }
  return (o.status?.conditions ?? []).some((c: Obj) => c.type === "Ready" && c.status === "True");
}

/** One pass: every object of the stand-in's kinds in `namespace` gets its status. Returns what it wrote. */
export async function standInOnce(namespace: string): Promise<string[]> {
  const wrote: string[] = [];
  for (const [resource, status] of Object.entries(STATUS)) {
    const list = await kubectl(["get", resource, "-n", namespace, "-o", "json"]);
    if (list.code !== 0) continue;
    for (const o of (JSON.parse(list.stdout).items ?? []) as Obj[]) {
      if (written(resource, o)) continue;
      const res = await kubectl([
        "patch",
        resource,
        o.metadata.name,
        "-n",
        namespace,
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({ status: status(o) }),
      ]);
      if (res.code === 0) wrote.push(`${resource}/${o.metadata.name}`);
    }
  }
  return wrote;
}

/** Runs {@linkcode standInOnce} every second until stopped; `wrote` lists every status it wrote. */
export function startStandIn(namespace: string): { wrote: string[]; stop(): Promise<void> } {
  const wrote: string[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      wrote.push(...await standInOnce(namespace));
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  return {
    wrote,
    async stop() {
      running = false;
      await done;
    },
  };
}
