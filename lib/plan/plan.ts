import { DEFAULT_HOOK_CONFIG } from "../hook_context/mod.ts";
import { createApp, type RouteRegistrar } from "../http/mod.ts";
import { type Refusal, webhookSpecs } from "./admission.ts";
import { storeClient } from "./api.ts";
import { type ApplyContext, applyOne, namespaceNotFound, type Outcome, sizeRefusal } from "./apply.ts";
import { controllerSpecs, type HookCall, type NamedRead, reconcile } from "./metacontroller.ts";
import type { SourcedObject, Unreadable } from "./input.ts";
import { KindCatalog } from "./kinds.ts";
import { BUILTIN_RESOURCES, crdResources, groupOf, Resources } from "./resources.ts";
import { describe, type Obj, objectId, Store } from "./store.ts";
import { admissionPolicies, crdKinds, NEWEST_MINOR } from "../schema/mod.ts";

/** What a plan starts from and runs. */
export interface PlanOptions {
  /** The objects to apply (the user's folder), in the order read. */
  readonly desired: readonly SourcedObject[];
  /** What the cluster holds already (`kubectl get -o yaml` exports); empty for a new cluster. */
  readonly live?: readonly Obj[];
  /** The instant every hook sees (RFC 3339). */
  readonly now: string;
  /** The install (`manifests/` rendered): CRDs, controllers, webhook configurations and namespaces. */
  readonly install: readonly Obj[];
  /** The hook service's routes: the plan calls the real hooks and webhooks. */
  readonly routes: readonly RouteRegistrar[];
  /**
   * Schema refusals of kinds the install's CRDs do not define (core, RBAC), by index into `desired`, in kubectl's
   * words (kubectl-validate's, where installed). The install's own kinds are always judged in process.
   */
  readonly schema?: ReadonlyMap<number, Omit<Refusal, "by">>;
  /** Namespace of namespaced objects that name none (kubectl's default). */
  readonly defaultNamespace?: string;
  /** Rounds of every controller before the plan gives up on a fixed point. */
  readonly maxRounds?: number;
  /** Documents of the input that could not be read: reported first, the rest planned all the same. */
  readonly unreadable?: readonly Unreadable[];
  /** The Kubernetes minor version judged as (its built-in kinds and formats; default: the newest). */
  readonly minor?: number;
}

/** A controller that could not sync an object at the fixed point. */
export interface Failure {
  readonly id: string;
  readonly name: string;
  readonly message: string;
}

/** Everything a plan found. */
export interface PlanResult {
  readonly now: string;
  /** One per input object, in apply order. */
  readonly outcomes: readonly Outcome[];
  readonly failures: readonly Failure[];
  readonly converged: boolean;
  /** Rounds of every controller it took, over all apply waves. */
  readonly rounds: number;
  /** Every object at the end, sorted by identity. */
  readonly objects: readonly Obj[];
  /** The live objects it started from, sorted by identity. */
  readonly live: readonly Obj[];
  /** Whether schema refusals of the kinds the install's CRDs do not define were supplied (kubectl-validate ran). */
  readonly schemaChecked: boolean;
  /** The objects each parent's controller names and reads (its references), at its last sync, by parent id. */
  readonly reads: ReadonlyMap<string, readonly NamedRead[]>;
}

/** Kinds applied first, in this order (the rest after, in input order): what others refer to goes first. */
const APPLY_ORDER = [
  "Namespace",
  "Secret",
  "ConfigMap",
  "Team",
  "ProviderConfig",
  "NetworkPool",
  "IPAllocation",
  "TenantCluster",
];

/** Namespaces every cluster has before anything is applied. */
const SYSTEM_NAMESPACES = ["default", "kube-system", "kube-public"];

/** Rounds of every controller before a plan reports it does not converge. */
export const MAX_ROUNDS = 40;

/**
 * Plans a folder of manifests: applies each object the way the API server admits it (schema, policies, the real
 * webhooks), then runs every controller's real hooks the way Metacontroller applies their answers, round after
 * round until nothing changes. Objects waiting for a namespace a controller creates (a Team's `team-{name}`) are
 * applied once it exists, as a GitOps tool's retries would. Deterministic: the same options give the same result.
 */
export async function runPlan(options: PlanOptions): Promise<PlanResult> {
  const resources = installResources(options.install);
  const store = new Store(resources, options.now);
  for (const o of options.live ?? []) if (store.typeOf(o)) store.load(o);
  const live = store.all().map((o) => structuredClone(o));
  const added = bootstrapNamespaces(store, options.install);
  const call = hookCaller(store, options);
  const controllers = converger(store, resources, controllerSpecs(options.install), call, options.maxRounds);
  const ctx: ApplyContext = {
    store,
    call,
    webhooks: webhookSpecs(options.install),
    namespaceType: resources.ofKind("v1", "Namespace")!,
    kinds: crdKinds(options.install),
    catalog: new KindCatalog(options.minor ?? NEWEST_MINOR, options.install, [
      ...options.desired.map((d) => d.object),
      ...(options.live ?? []),
    ]),
    policies: admissionPolicies(options.install),
    defaultNamespace: options.defaultNamespace ?? "default",
    ...(options.schema ? { schema: options.schema } : {}),
    minor: options.minor ?? NEWEST_MINOR,
  };

  const order = (o: Obj) => {
    const i = APPLY_ORDER.indexOf(o.kind);
    return i < 0 ? APPLY_ORDER.length : i;
  };
  const outcomes: Outcome[] = (options.unreadable ?? []).map((u) => ({
    source: u.source,
    id: `unreadable/${u.source}`,
    name: u.source,
    action: "unreadable",
    refusal: { by: "kubectl", message: u.message },
    line: u.line,
  }));
  let pending = options.desired.map((d, index) => ({ ...d, index }))
    .sort((a, b) => order(a.object) - order(b.object) || a.index - b.index);
  await controllers.converge();
  while (pending.length) {
    const waiting: typeof pending = [];
    for (const item of pending) {
      const applied = await applyOne(ctx, item);
      if ("waiting" in applied) waiting.push({ ...item, object: applied.waiting });
      else outcomes.push(withInput(applied, options.desired[item.index]!));
    }
    await controllers.converge();
    if (waiting.length === pending.length) {
      outcomes.push(
        ...waiting.map((item) => withInput(namespaceNotFound(item), options.desired[item.index]!)),
      );
      break;
    }
    pending = waiting;
  }

  const stored = store.all();
  const present = new Set(stored.map(objectId));
  const named = new Set(outcomes.map((o) => o.id));
  return {
    now: options.now,
    outcomes,
    failures: [...controllers.failures.values()].filter((f) => present.has(f.id))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    converged: controllers.converged(),
    rounds: controllers.rounds(),
    // The namespaces every cluster and the install have are not the plan's to show, unless the input names them.
    objects: stored.filter((o) => !added.has(objectId(o)) || named.has(objectId(o))),
    live,
    schemaChecked: options.schema !== undefined,
    reads: controllers.reads(),
  };
}

/** A refused outcome with its input as written and the line where it starts; any other as it is. */
function withInput(outcome: Outcome, written: SourcedObject): Outcome {
  if (outcome.action !== "refused") return outcome;
  const at = written.lineOf?.("");
  // An object refused for its size is not repeated in the output (it is the size that is wrong with it).
  const input = sizeRefusal(written.object) ? undefined : written.object;
  return { ...outcome, ...(input ? { input } : {}), ...(at ? { at } : {}) };
}

/** The namespaces every cluster has, and the install's, stored unless present; returns the ids added. */
function bootstrapNamespaces(store: Store, install: readonly Obj[]): Set<string> {
  const bootstrap = [
    ...SYSTEM_NAMESPACES.map((name) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } })),
    ...install.filter((m) => m.kind === "Namespace"),
  ];
  const added = new Set<string>();
  for (const ns of bootstrap) {
    if (store.find(ns)) continue;
    store.load(ns as Obj);
    added.add(objectId(ns as Obj));
  }
  return added;
}

/** Calls the real hook service's routes in process, its admission reading the plan's store. */
function hookCaller(store: Store, options: PlanOptions): HookCall {
  const service = createApp({
    bodyLimitBytes: 256 * 1024 * 1024,
    clockOverride: false,
    hookConfig: DEFAULT_HOOK_CONFIG,
    routes: options.routes,
    clock: () => new Date(options.now),
    log: () => {},
    kube: storeClient(store),
  });
  return appCaller(service.app);
}

/**
 * A {@linkcode HookCall} over an app in process (`app.request()`): the body sent as JSON, the answer parsed as JSON,
 * or kept as text when it is not.
 *
 * @example
 * ```ts
 * const call = appCaller(createApp(options).app);
 * await call("/hooks/team/sync", request); // { status: 200, body: { children: [...], status: {...} } }
 * ```
 */
export function appCaller(
  app: { request(path: string, init: RequestInit): Response | Promise<Response> },
): HookCall {
  return async (path, body) => {
    const res = await app.request(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch { /* an error body that is not JSON is reported as text */ }
    return { status: res.status, body: parsed };
  };
}

/**
 * Runs every controller over every parent, round after round, until a round changes nothing (or the rounds run
 * out: not converged). Keeps each parent's last failure until a later sync of it succeeds.
 */
function converger(
  store: Store,
  resources: Resources,
  controllers: ReturnType<typeof controllerSpecs>,
  call: HookCall,
  maxRounds = MAX_ROUNDS,
) {
  const failures = new Map<string, Failure>();
  const reads = new Map<string, readonly NamedRead[]>();
  let rounds = 0;
  let converged = true;
  async function converge(): Promise<void> {
    for (let round = 1; round <= maxRounds; round++) {
      rounds++;
      const before = store.changes;
      for (const spec of controllers) {
        for (const rule of spec.parents) {
          const type = resources.ofResource(groupOf(rule.apiVersion), rule.resource);
          if (!type) continue;
          for (const parent of store.list(type)) {
            const result = await reconcile(store, spec, parent, call);
            const id = `${spec.name}:${objectId(parent)}`;
            if (result.reads) reads.set(id, result.reads);
            if (result.error) {
              failures.set(id, {
                id: objectId(parent),
                name: describe(parent),
                message: `${spec.name}: ${result.error}`,
              });
            } else failures.delete(id);
          }
        }
      }
      if (store.changes === before) return;
    }
    converged = false;
  }
  /** The reads of each parent, over its controllers. */
  function readsByParent(): Map<string, readonly NamedRead[]> {
    const out = new Map<string, NamedRead[]>();
    for (const [key, list] of reads) {
      const parent = key.slice(key.indexOf(":") + 1);
      out.set(parent, [...(out.get(parent) ?? []), ...list]);
    }
    return out;
  }
  return { converge, failures, rounds: () => rounds, converged: () => converged, reads: readsByParent };
}

/** The kinds a plan knows: the built-in ones it stores and those of the install's CRDs. */
export function installResources(install: readonly Obj[]): Resources {
  const crds = install.filter((m) => m.kind === "CustomResourceDefinition");
  return new Resources([...BUILTIN_RESOURCES, ...crdResources(crds)]);
}
