/**
 * The hostile corpus of the hook service (issue #46): what a hostile team can have Metacontroller send to the
 * hooks, and what any caller can send to the admission webhooks of an install without webhook client
 * authentication. Each entry says where it goes, as whom, and the answers that are right for it: none of them may
 * end the process, fail `/readyz` or hold the benign team's calls.
 *
 * @module
 */
import { teamShapeSyncBody } from "../../bench/team_data.ts";

/** One hostile request. */
export interface Attack {
  readonly name: string;
  readonly listener: "hooks" | "webhooks";
  readonly path: string;
  /** The client pair it presents (`metacontroller` for hook calls, which need one), or none. */
  readonly as?: string;
  readonly body: () => Uint8Array;
  /** The statuses that are right for it. */
  readonly expect: readonly number[];
  /** How many are sent at once, each round. */
  readonly burst: number;
}

const MIB = 1024 * 1024;
const encode = (s: string) => new TextEncoder().encode(s);

/** A Team sync whose parent is `spec`, with nothing observed yet. */
function teamSync(spec: unknown): string {
  const body = JSON.parse(teamShapeSyncBody({
    users: 1,
    groups: 0,
    environments: 0,
    environmentUsers: 0,
    environmentGroups: 0,
  }, 0));
  body.parent.metadata.name = "hostile";
  body.parent.spec = spec;
  for (const group of Object.keys(body.children)) body.children[group] = {};
  return JSON.stringify(body);
}

/** An AdmissionReview of `object`, as the API server sends one for a create. */
function review(kind: string, resource: string, namespace: string | undefined, object: unknown): string {
  return JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: crypto.randomUUID(),
      kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind },
      resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource },
      name: "hostile",
      ...(namespace ? { namespace } : {}),
      operation: "CREATE",
      userInfo: { username: "mallory@example.com" },
      object,
      oldObject: null,
      dryRun: true,
    },
  });
}

/** A ProviderConfig update review (it reads nothing) whose object carries `pad` in an annotation's place. */
function padded(pad: string): string {
  const text = JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "hostile",
      kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind: "ProviderConfig" },
      resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource: "providerconfigs" },
      name: "hostile",
      namespace: "butler-system",
      operation: "UPDATE",
      userInfo: { username: "mallory@example.com" },
      object: { metadata: { name: "hostile", annotations: { pad: "PAD" } }, spec: {} },
      oldObject: { metadata: { name: "hostile" }, spec: {} },
    },
  });
  return text.replace('"PAD"', pad);
}

/** The corpus. */
export const CORPUS: readonly Attack[] = [
  {
    // Issue #46 item 1: 2,000 viewers and 2,000 environments (it used to end every hook replica).
    name: "Team of 2,000 viewers x 2,000 environments",
    listener: "hooks",
    path: "/hooks/team/sync",
    as: "metacontroller",
    body: () =>
      encode(teamSync({
        access: { users: Array.from({ length: 2000 }, (_, i) => ({ name: `viewer${i}@example.com` })) },
        environments: Array.from({ length: 2000 }, (_, i) => ({ name: `env-${i}` })),
      })),
    expect: [200],
    burst: 2,
  },
  {
    name: "Team with a 12 MB description",
    listener: "hooks",
    path: "/hooks/team/sync",
    as: "metacontroller",
    body: () => encode(teamSync({ access: {}, description: "d".repeat(12 * MIB) })),
    expect: [200],
    burst: 1,
  },
  {
    name: "15 MB of empty objects to a hook",
    listener: "hooks",
    path: "/hooks/tenantcluster/sync",
    as: "metacontroller",
    body: () => encode(`[${"{},".repeat(5 * MIB)}{}]`),
    expect: [413],
    burst: 1,
  },
  {
    name: "JSON nested a million deep to a hook",
    listener: "hooks",
    path: "/hooks/networkpool/sync",
    as: "metacontroller",
    body: () => encode("[".repeat(MIB) + "]".repeat(MIB)),
    expect: [413],
    burst: 1,
  },
  {
    name: "a hook call without Metacontroller's certificate",
    listener: "hooks",
    path: "/hooks/team/sync",
    body: () => encode(teamSync({ access: {} })),
    expect: [403],
    burst: 4,
  },
  {
    // Issue #46 item 2: 8 MiB used to end the process.
    name: "an 8 MiB AdmissionReview",
    listener: "webhooks",
    path: "/webhooks/validate/providerconfig",
    body: () => encode(padded(`[${"{},".repeat((8 * MIB) / 3)}{}]`)),
    expect: [413],
    burst: 2,
  },
  {
    name: "a 4 MiB AdmissionReview of empty objects",
    listener: "webhooks",
    path: "/webhooks/validate/providerconfig",
    body: () => encode(padded(`[${"{},".repeat((4 * MIB) / 3)}{}]`)),
    expect: [413, 429, 503],
    burst: 2,
  },
  {
    // Issue #46 item 3: 80,000 addons used to build an 8 MB refusal with 80,000 causes.
    name: "a TenantCluster of 80,000 addons",
    listener: "webhooks",
    path: "/webhooks/validate/tenantcluster",
    body: () =>
      encode(review("TenantCluster", "tenantclusters", "team-payments", {
        apiVersion: "butler.butlerlabs.dev/v1alpha1",
        kind: "TenantCluster",
        metadata: { name: "hostile", namespace: "team-payments" },
        spec: { addons: Array.from({ length: 80_000 }, (_, i) => ({ name: `addon-${i}` })) },
      })),
    expect: [200, 429, 503],
    burst: 2,
  },
  {
    name: "an AdmissionReview nested a million deep",
    listener: "webhooks",
    path: "/webhooks/validate/providerconfig",
    body: () => encode(padded("[".repeat(MIB) + "]".repeat(MIB))),
    expect: [200, 400, 413, 429, 503],
    burst: 2,
  },
  {
    name: "an AdmissionReview with a 6 MB string",
    listener: "webhooks",
    path: "/webhooks/validate/providerconfig",
    body: () => encode(padded(JSON.stringify("s".repeat(6 * MIB)))),
    expect: [200, 413, 429, 503],
    burst: 2,
  },
  {
    name: "a burst of 1 MB AdmissionReviews of many small objects",
    listener: "webhooks",
    path: "/webhooks/validate/providerconfig",
    body: () => encode(padded(`[${'{"a":1},'.repeat(MIB / 8)}{}]`)),
    expect: [200, 413, 429, 503],
    burst: 24,
  },
];
