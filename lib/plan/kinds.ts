/**
 * The kinds a plan knows, resolved as kubectl resolves a manifest's `apiVersion` and `kind` against the API
 * server's discovery: the built-in kinds of Kubernetes (per minor version, {@linkcode BUILTIN_KINDS}), the install's
 * CRDs (Butler's), and the kinds of the CustomResourceDefinitions the input or `--live` holds. Anything else is
 * refused in kubectl's words (`no matches for kind "Team" in version "butler.butlerlabs.io/v1alpha1"`), as a cluster
 * without that CRD refuses it.
 *
 * @module
 */
import { BUILTIN_KINDS } from "./builtin_kinds.ts";
import { groupOf } from "./resources.ts";
import type { Obj } from "./store.ts";

/** Where a plan knows a kind from. */
export type KindSource = "builtin" | "install" | "input";

/** A served kind: group, version, kind, scope and where the plan knows it from. */
export interface KnownKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly source: KindSource;
}

/** `group/version` as an apiVersion (`v1` for the core group). */
const apiVersionOf = (k: Pick<KnownKind, "group" | "version">) =>
  k.group ? `${k.group}/${k.version}` : k.version;

/** The served kinds of CustomResourceDefinitions (every served version). */
function crdKindsOf(objects: readonly Obj[], source: KindSource): KnownKind[] {
  return objects.filter((o) =>
    o.kind === "CustomResourceDefinition" && groupOf(o.apiVersion) === "apiextensions.k8s.io"
  )
    .flatMap((crd) => {
      const spec = crd.spec ?? {};
      if (typeof spec.group !== "string" || typeof spec.names?.kind !== "string") return [];
      return (Array.isArray(spec.versions) ? spec.versions : []).filter((v: { served?: boolean }) =>
        v?.served
      )
        .map((v: { name: string }) => ({
          group: spec.group,
          version: v.name,
          kind: spec.names.kind,
          namespaced: spec.scope !== "Cluster",
          source,
        }));
    });
}

/**
 * The kinds of the built-in API of Kubernetes `1.<minor>` (what a cluster serves without a CRD, by default).
 *
 * @example
 * ```ts
 * builtinKinds(35).some((k) => k.kind === "Deployment"); // true
 * ```
 */
export function builtinKinds(minor: number): KnownKind[] {
  const table = BUILTIN_KINDS[minor] ?? BUILTIN_KINDS[Math.max(...Object.keys(BUILTIN_KINDS).map(Number))]!;
  return table.map((entry) => {
    const [gv, kind, scope] = entry.split(" ") as [string, string, string];
    const slash = gv.indexOf("/");
    return {
      group: slash < 0 ? "" : gv.slice(0, slash),
      version: slash < 0 ? gv : gv.slice(slash + 1),
      kind,
      namespaced: scope === "namespaced",
      source: "builtin" as const,
    };
  });
}

/** The kinds a plan knows, and how it resolves a manifest's. */
export class KindCatalog {
  readonly #byKey = new Map<string, KnownKind>();

  /**
   * The catalog of Kubernetes `1.<minor>`, the install's CRDs and the CRDs among `given` (the input and `--live`):
   * a kind known from several places is known from the first (built-in, install, input).
   */
  constructor(minor: number, install: readonly Obj[], given: readonly Obj[] = []) {
    for (
      const k of [...builtinKinds(minor), ...crdKindsOf(install, "install"), ...crdKindsOf(given, "input")]
    ) {
      const key = `${apiVersionOf(k)}/${k.kind}`;
      if (!this.#byKey.has(key)) this.#byKey.set(key, k);
    }
  }

  /**
   * The kind of `apiVersion` and `kind`, or kubectl's words when the API server serves no such kind.
   *
   * @example
   * ```ts
   * catalog.resolve("butler.butlerlabs.io/v1alpha1", "Team");
   * // 'no matches for kind "Team" in version "butler.butlerlabs.io/v1alpha1"'
   * ```
   */
  resolve(apiVersion: string, kind: string): KnownKind | string {
    const found = this.#byKey.get(`${apiVersion}/${kind}`) ?? this.#lowercase(apiVersion, kind);
    if (found) return found;
    if (apiVersion.split("/").length > 2) return `unexpected GroupVersion string: ${apiVersion}`;
    return `no matches for kind ${JSON.stringify(kind)} in version ${JSON.stringify(apiVersion)}`;
  }

  /** kubectl's discovery maps a kind written all in lower case (`team`) too; the API server then refuses it. */
  #lowercase(apiVersion: string, kind: string): KnownKind | undefined {
    if (kind !== kind.toLowerCase()) return undefined;
    return [...this.#byKey.values()].find((k) =>
      apiVersionOf(k) === apiVersion && k.kind.toLowerCase() === kind
    );
  }
}
