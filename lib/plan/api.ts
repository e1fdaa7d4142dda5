import type { LabelSelector } from "../contract/mod.ts";
import type { KubeClient } from "../kube/mod.ts";
import type { Obj, Store } from "./store.ts";

/**
 * Whether labels match a selector, as the API server decides it (an empty selector matches everything).
 *
 * @example
 * ```ts
 * matchesSelector({ a: "1" }, { matchExpressions: [{ key: "a", operator: "In", values: ["1", "2"] }] }); // true
 * ```
 */
export function matchesSelector(
  labels: Readonly<Record<string, string>> | null | undefined,
  selector: LabelSelector | undefined,
): boolean {
  const l = labels ?? {};
  const byLabels = Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => l[k] === v);
  return byLabels && (selector?.matchExpressions ?? []).every((e) => {
    const has = Object.hasOwn(l, e.key);
    switch (e.operator) {
      case "In":
        return has && (e.values ?? []).includes(l[e.key]!);
      case "NotIn":
        return !has || !(e.values ?? []).includes(l[e.key]!);
      case "Exists":
        return has;
      case "DoesNotExist":
        return !has;
    }
  });
}

/** An equality-only selector string (`a=1,b=2`), the only form admission's reads use. */
function parseEqualitySelector(text: string): LabelSelector {
  const matchLabels: Record<string, string> = {};
  for (const term of text.split(",").filter(Boolean)) {
    const m = /^([^=!]+)==?([^=]*)$/.exec(term.trim());
    if (!m) throw new Error(`plan: label selector ${JSON.stringify(text)} is not equality-only`);
    matchLabels[m[1]!] = m[2]!;
  }
  return { matchLabels };
}

/** `/api/v1/...` or `/apis/{group}/{version}/...`, with an optional namespace and name. */
const PATH =
  /^\/(?:api\/(?<coreVersion>[^/]+)|apis\/(?<group>[^/]+)\/(?<version>[^/]+))(?:\/namespaces\/(?<namespace>[^/]+))?\/(?<resource>[^/]+)(?:\/(?<name>[^/]+))?$/;

/** The parts of an API path: group (`""` for core), version, resource, and the namespace and name when it has them. */
export interface ApiPath {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
}

/**
 * Reads an API path (a query is ignored); `undefined` when it is not one.
 *
 * @example
 * ```ts
 * apiPath("/api/v1/namespaces/a/configmaps/b"); // { group: "", version: "v1", resource: "configmaps", namespace: "a", name: "b" }
 * ```
 */
export function apiPath(path: string): ApiPath | undefined {
  const g = PATH.exec(path.split("?")[0]!)?.groups;
  if (!g) return undefined;
  return {
    group: g.group ?? "",
    version: g.coreVersion ?? g.version!,
    resource: g.resource!,
    ...(g.namespace === undefined ? {} : { namespace: decodeURIComponent(g.namespace) }),
    ...(g.name === undefined ? {} : { name: decodeURIComponent(g.name) }),
  };
}

/**
 * Admission's reads served from the plan's store: GETs of one object (`undefined` when absent) and lists with
 * an equality label selector. Writes are refused: the plan sends every review as a dry run, which writes nothing.
 */
export function storeClient(store: Store): KubeClient {
  function resolve(path: string): { items: () => Obj[]; name?: string; namespace?: string } {
    const p = apiPath(path);
    const type = p && store.resources.ofResource(p.group, p.resource);
    if (!p || !type) throw new Error(`plan: admission read ${path}, which the plan does not serve`);
    const namespace = p.namespace;
    return {
      items: () =>
        store.list(type).filter((o) => namespace === undefined || o.metadata.namespace === namespace),
      ...(p.name === undefined ? {} : { name: p.name }),
      ...(namespace === undefined ? {} : { namespace }),
    };
  }
  return {
    get(path: string) {
      const r = resolve(path);
      const found = r.items().find((o) => o.metadata.name === r.name);
      return Promise.resolve(found ? structuredClone(found) : undefined);
    },
    list(path: string, options: { labelSelector?: string } = {}) {
      const selector = options.labelSelector ? parseEqualitySelector(options.labelSelector) : undefined;
      return Promise.resolve(
        resolve(path).items().filter((o) => matchesSelector(o.metadata.labels, selector)).map((o) =>
          structuredClone(o)
        ),
      );
    },
    write(method: string, path: string) {
      return Promise.reject(new Error(`plan: admission wrote (${method} ${path}) during a dry run`));
    },
  };
}
