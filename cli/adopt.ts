/**
 * `kubectl butler adopt`: Butler's children brought back under their parents after a restore. Velero (as any tool
 * that recreates objects) drops owner references and gives every parent a new UID, so Metacontroller no longer
 * sees the restored namespaces, RBAC, MetalLB ConfigMaps and claims' attachments as anyone's: a composite adopts
 * an orphan only when its `controller-uid` label names the parent's current UID, and a decorator never adopts.
 * This module finds each orphan's parent by the labels Butler gives its children (stable names, not UIDs) and
 * says what to write: the label, for a composite's child (Metacontroller then adopts it), or the controller
 * reference itself, for a decorator's attachment. It writes nothing and reads nothing.
 *
 * @module
 */
import { GROUP, LABELS } from "../lib/butler/mod.ts";
import { teamNamespace } from "../lib/api/mod.ts";

/** The label Metacontroller selects a composite's children by (`generateSelector: true`). */
export const CONTROLLER_UID = "controller-uid";
/** The annotation Metacontroller puts on a decorator's attachments: the decorator's name. */
export const DECORATOR_ANNOTATION = "metacontroller.k8s.io/decorator-controller";
/** The label naming the claim an IPAllocation serves (hooks/ipaddressclaim). */
const CLAIM_LABEL = `${GROUP}/ipaddressclaim`;

/** A parent kind: its API path segments, as the command lists it. */
export interface ParentKind {
  readonly kind: "Team" | "TenantCluster" | "IPAddressClaim";
  readonly apiVersion: string;
  readonly resource: string;
}

/** The parents Butler's controllers have children for. */
export const PARENT_KINDS: readonly ParentKind[] = [
  { kind: "Team", apiVersion: "butler.butlerlabs.dev/v1alpha1", resource: "teams" },
  { kind: "TenantCluster", apiVersion: "butler.butlerlabs.dev/v1alpha1", resource: "tenantclusters" },
  { kind: "IPAddressClaim", apiVersion: "ipam.cluster.x-k8s.io/v1beta2", resource: "ipaddressclaims" },
];

/** A child kind of one of Butler's controllers, and how a restored one names its parent. */
export interface ChildKind {
  readonly apiVersion: string;
  readonly resource: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly parent: ParentKind["kind"];
  /** The Metacontroller controller whose child it is (`manifests/controllers`, the Cluster API component). */
  readonly controller: "butler-team" | "butler-tenantcluster" | "butler-ipaddressclaim";
  /** The label selector that lists the candidates. */
  readonly selector?: string;
}

const RBAC = "rbac.authorization.k8s.io/v1";
const team = (apiVersion: string, resource: string, kind: string, namespaced: boolean): ChildKind => ({
  apiVersion,
  resource,
  kind,
  namespaced,
  parent: "Team",
  controller: "butler-team",
  selector: `${LABELS.team},${CONTROLLER_UID}`,
});

/** Every child kind of Butler's controllers (a test holds this to the shipped controllers). */
export const CHILD_KINDS: readonly ChildKind[] = [
  team("v1", "namespaces", "Namespace", false),
  team(RBAC, "roles", "Role", true),
  team(RBAC, "rolebindings", "RoleBinding", true),
  team(RBAC, "clusterroles", "ClusterRole", false),
  team(RBAC, "clusterrolebindings", "ClusterRoleBinding", false),
  team("v1", "resourcequotas", "ResourceQuota", true),
  team("v1", "limitranges", "LimitRange", true),
  ...(["ipallocations", "configmaps"] as const).map((resource): ChildKind => ({
    apiVersion: resource === "configmaps" ? "v1" : "butler.butlerlabs.dev/v1alpha1",
    resource,
    kind: resource === "configmaps" ? "ConfigMap" : "IPAllocation",
    namespaced: true,
    parent: "TenantCluster",
    controller: "butler-tenantcluster",
    selector: `${LABELS.tenant},${CONTROLLER_UID}`,
  })),
  {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    resource: "ipallocations",
    kind: "IPAllocation",
    namespaced: true,
    parent: "IPAddressClaim",
    controller: "butler-ipaddressclaim",
    selector: CLAIM_LABEL,
  },
  {
    apiVersion: "ipam.cluster.x-k8s.io/v1beta2",
    resource: "ipaddresses",
    kind: "IPAddress",
    namespaced: true,
    parent: "IPAddressClaim",
    controller: "butler-ipaddressclaim",
  },
];

/** An object as listed: what adopting reads of it. */
export interface Listed {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly uid?: string;
    readonly labels?: Record<string, string> | null;
    readonly annotations?: Record<string, string> | null;
    readonly ownerReferences?: readonly { controller?: boolean; uid?: string }[] | null;
    readonly deletionTimestamp?: string | null;
  };
  readonly spec?: unknown;
}

/** What to write to one orphan, and why. */
export interface Adoption {
  readonly child: ChildKind;
  readonly namespace?: string;
  readonly name: string;
  /** The parent, `Kind namespace/name`. */
  readonly parent: string;
  /** `label`: set `controller-uid` (Metacontroller adopts); `owner`: add the controller reference. */
  readonly write: "label" | "owner";
  /** The object with the write applied, to PUT (its resourceVersion the precondition). */
  readonly object: Record<string, unknown>;
}

/** Parents by kind, keyed `namespace/name` (a cluster-scoped Team by its name). */
export type Parents = Readonly<Record<ParentKind["kind"], ReadonlyMap<string, Listed>>>;

/** The key of an object: `namespace/name`, or its name when cluster-scoped. */
export function keyOf(o: Listed): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

/** The parent a restored child names, by its stable labels (or its claim's name), if it exists. */
function parentOf(child: ChildKind, o: Listed, parents: Parents): Listed | undefined {
  const labels = o.metadata.labels ?? {};
  const ns = o.metadata.namespace ?? "";
  if (child.parent === "Team") {
    const name = labels[LABELS.team];
    // A Team's children live in its namespace (or are cluster-scoped): a label elsewhere names no Team.
    if (!name || (child.namespaced && ns !== teamNamespace(name))) return undefined;
    if (child.resource === "namespaces" && o.metadata.name !== teamNamespace(name)) return undefined;
    return parents.Team.get(name);
  }
  if (child.parent === "TenantCluster") {
    const name = labels[LABELS.tenant];
    return name ? parents.TenantCluster.get(`${ns}/${name}`) : undefined;
  }
  if (o.metadata.annotations?.[DECORATOR_ANNOTATION] !== child.controller) return undefined;
  const claim = child.resource === "ipallocations"
    ? labels[CLAIM_LABEL]
    : (o.spec as { claimRef?: { name?: unknown } } | undefined)?.claimRef?.name;
  return typeof claim === "string" ? parents.IPAddressClaim.get(`${ns}/${claim}`) : undefined;
}

/**
 * What to write so that each orphan among `objects` (of kind `child`) is its parent's again: nothing for an object
 * that has a controller, is being deleted, names no parent that exists, or (a composite's child) already carries
 * its parent's UID.
 *
 * @example
 * ```ts
 * const parents = { Team: new Map([["payments", team]]), TenantCluster: new Map(), IPAddressClaim: new Map() };
 * adoptions(CHILD_KINDS[0]!, [restoredNamespace], parents); // [{ write: "label", ... }]
 * ```
 */
export function adoptions(child: ChildKind, objects: readonly Listed[], parents: Parents): Adoption[] {
  return objects.flatMap((o): Adoption[] => {
    if (o.metadata.deletionTimestamp) return [];
    if ((o.metadata.ownerReferences ?? []).some((r) => r.controller === true)) return [];
    const parent = parentOf(child, o, parents);
    const uid = parent?.metadata.uid;
    if (!parent || !uid) return [];
    const kind = PARENT_KINDS.find((p) => p.kind === child.parent)!;
    const at = { child, name: o.metadata.name, parent: `${child.parent} ${keyOf(parent)}` };
    const base = {
      ...(o as unknown as Record<string, unknown>),
      apiVersion: child.apiVersion,
      kind: child.kind,
    };
    if (child.controller !== "butler-ipaddressclaim") {
      if (o.metadata.labels?.[CONTROLLER_UID] === uid) return [];
      const metadata = { ...o.metadata, labels: { ...o.metadata.labels, [CONTROLLER_UID]: uid } };
      return [{ ...at, ...ns(o), write: "label", object: { ...base, metadata } }];
    }
    const ref = {
      apiVersion: kind.apiVersion,
      kind: kind.kind,
      name: parent.metadata.name,
      uid,
      controller: true,
      blockOwnerDeletion: true,
    };
    const metadata = { ...o.metadata, ownerReferences: [...(o.metadata.ownerReferences ?? []), ref] };
    return [{ ...at, ...ns(o), write: "owner", object: { ...base, metadata } }];
  });
}

function ns(o: Listed): { namespace?: string } {
  return o.metadata.namespace ? { namespace: o.metadata.namespace } : {};
}

/** One line per adoption, for the terminal. */
export function renderAdoptions(done: readonly Adoption[], dryRun: boolean): string {
  if (!done.length) return "nothing to adopt: every child of Butler's controllers has its parent\n";
  const verb = dryRun ? "would be" : "";
  return done.map((a) => {
    const what = `${a.child.kind.toLowerCase()} ${a.namespace ? `${a.namespace}/` : ""}${a.name}`;
    const how = a.write === "label"
      ? `labelled ${CONTROLLER_UID} for its ${a.parent}`
      : `given its ${a.parent} as controller`;
    return `${what} ${verb ? `${verb} ` : ""}${how}\n`;
  }).join("");
}
