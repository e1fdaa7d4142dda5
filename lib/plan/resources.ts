/** A resource type the plan can store: its kind, plural and scope, with the apiVersion it is served at. */
export interface ResourceType {
  readonly apiVersion: string;
  readonly kind: string;
  readonly resource: string;
  readonly namespaced: boolean;
}

/** The built-in kinds our controllers own or read, and the ones a GitOps folder holds beside Butler's. */
export const BUILTIN_RESOURCES: readonly ResourceType[] = [
  { apiVersion: "v1", kind: "Namespace", resource: "namespaces", namespaced: false },
  { apiVersion: "v1", kind: "Secret", resource: "secrets", namespaced: true },
  { apiVersion: "v1", kind: "ConfigMap", resource: "configmaps", namespaced: true },
  { apiVersion: "v1", kind: "ResourceQuota", resource: "resourcequotas", namespaced: true },
  { apiVersion: "v1", kind: "LimitRange", resource: "limitranges", namespaced: true },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", resource: "roles", namespaced: true },
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    resource: "rolebindings",
    namespaced: true,
  },
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    resource: "clusterroles",
    namespaced: false,
  },
  {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    resource: "clusterrolebindings",
    namespaced: false,
  },
];

/** The API group of an apiVersion (`""` for the core group). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

// deno-lint-ignore no-explicit-any
type Crd = { spec?: any; [key: string]: unknown };

/**
 * The resource types a set of CustomResourceDefinitions serves (each at its storage version).
 *
 * @example
 * ```ts
 * crdResources([teamsCrd]); // [{ apiVersion: "butler.butlerlabs.dev/v1alpha1", kind: "Team", resource: "teams", namespaced: false }]
 * ```
 */
export function crdResources(crds: readonly Crd[]): ResourceType[] {
  return crds.map((crd) => {
    const spec = crd.spec ?? {};
    const version = (spec.versions ?? []).find((v: { storage?: boolean }) => v.storage) ?? spec.versions?.[0];
    if (!spec.group || !version?.name || !spec.names?.kind || !spec.names?.plural) {
      throw new Error("a CustomResourceDefinition without group, storage version, kind or plural");
    }
    return {
      apiVersion: `${spec.group}/${version.name}`,
      kind: spec.names.kind,
      resource: spec.names.plural,
      namespaced: spec.scope === "Namespaced",
    };
  });
}

/** Finds resource types by kind or by plural, within an API group. */
export class Resources {
  readonly #byKind = new Map<string, ResourceType>();
  readonly #byResource = new Map<string, ResourceType>();

  constructor(types: readonly ResourceType[]) {
    for (const t of types) {
      this.#byKind.set(`${groupOf(t.apiVersion)}/${t.kind}`, t);
      this.#byResource.set(`${groupOf(t.apiVersion)}/${t.resource}`, t);
    }
  }

  /** The type of a kind (any version of its group), or `undefined` when the plan does not know it. */
  ofKind(apiVersion: string, kind: string): ResourceType | undefined {
    return this.#byKind.get(`${groupOf(apiVersion)}/${kind}`);
  }

  /** The type of a plural in a group (`""` for core), or `undefined`. */
  ofResource(group: string, resource: string): ResourceType | undefined {
    return this.#byResource.get(`${group}/${resource}`);
  }
}
