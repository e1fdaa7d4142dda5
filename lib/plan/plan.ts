import { DEFAULT_HOOK_CONFIG } from "../hook_context/mod.ts";
import { createApp, type RouteRegistrar } from "../http/mod.ts";
import { admit, type Refusal, webhookSpecs } from "./admission.ts";
import { storeClient } from "./api.ts";
import { controllerSpecs, type HookCall, reconcile } from "./metacontroller.ts";
import type { SourcedObject } from "./input.ts";
import { BUILTIN_RESOURCES, crdResources, groupOf, Resources } from "./resources.ts";
import { describe, type Obj, objectId, Store } from "./store.ts";
import {
  admissionPolicies,
  type AdmissionPolicy,
  crdKinds,
  judge,
  kindOf,
  type KindSchema,
  type ManifestObject,
} from "../schema/mod.ts";

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
}

/** What happened to one input object. */
export interface Outcome {
  readonly source: string;
  readonly id: string;
  readonly name: string;
  readonly action: "create" | "update" | "unchanged" | "refused" | "skipped";
  readonly refusal?: Refusal;
  /** The line of the input a schema refusal points at (its first field's, or the nearest written parent's). */
  readonly line?: number;
  /** Why an object was skipped. */
  readonly note?: string;
  /** A refused input as written, and the line where it starts: what machine-readable output shows of it. */
  readonly input?: Obj;
  readonly at?: number;
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
    options,
    store,
    call,
    webhooks: webhookSpecs(options.install),
    namespaceType: resources.ofKind("v1", "Namespace")!,
    kinds: crdKinds(options.install),
    policies: admissionPolicies(options.install),
  };

  const order = (o: Obj) => {
    const i = APPLY_ORDER.indexOf(o.kind);
    return i < 0 ? APPLY_ORDER.length : i;
  };
  const outcomes: Outcome[] = [];
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
      for (const item of waiting) {
        outcomes.push(withInput({
          source: item.source,
          id: objectId(item.object),
          name: describe(item.object),
          action: "refused",
          refusal: { by: "API server", message: `namespaces "${item.object.metadata.namespace}" not found` },
        }, options.desired[item.index]!));
      }
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
  };
}

/** A refused outcome with its input as written and the line where it starts; any other as it is. */
function withInput(outcome: Outcome, written: SourcedObject): Outcome {
  if (outcome.action !== "refused") return outcome;
  const at = written.lineOf?.("");
  return { ...outcome, input: written.object, ...(at ? { at } : {}) };
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
  return { converge, failures, rounds: () => rounds, converged: () => converged };
}

/** What applying one object reads. */
interface ApplyContext {
  readonly options: PlanOptions;
  readonly store: Store;
  readonly call: HookCall;
  readonly webhooks: ReturnType<typeof webhookSpecs>;
  readonly namespaceType: NonNullable<ReturnType<Resources["ofKind"]>>;
  /** The served kinds of the install's CRDs, with their schemas. */
  readonly kinds: ReadonlyMap<string, KindSchema>;
  /** The install's ValidatingAdmissionPolicies, evaluated in process. */
  readonly policies: readonly AdmissionPolicy[];
}

/**
 * Applies one object as the API server would: skipped when Butler neither manages nor reads its kind, waiting
 * while its namespace does not exist, refused by its schema, a policy or a webhook, else created or updated.
 */
async function applyOne(
  ctx: ApplyContext,
  item: PlanOptions["desired"][number] & { index: number },
): Promise<Outcome | { waiting: Obj }> {
  const { options, store } = ctx;
  const object = structuredClone(item.object);
  const type = store.typeOf(object);
  const base = { source: item.source, id: objectId(object), name: describe(object) };
  const unserved = unservedKind(ctx.kinds, object);
  if (unserved) return { ...base, action: "refused", refusal: { by: "API server", message: unserved } };
  if (!type) {
    return {
      ...base,
      action: "skipped",
      note: `${object.kind} (${object.apiVersion}) is not a kind Butler manages or reads`,
    };
  }
  if (type.namespaced) object.metadata.namespace ??= options.defaultNamespace ?? "default";
  else delete object.metadata.namespace;
  const named = { ...base, id: objectId(object), name: describe(object) };
  const namespace = type.namespaced
    ? store.get(ctx.namespaceType, undefined, object.metadata.namespace!)
    : undefined;
  if (type.namespaced && !namespace) return { waiting: object };
  const own = ctx.kinds.has(`${object.apiVersion}/${object.kind}`);
  const schema = own ? undefined : options.schema?.get(item.index);
  if (schema !== undefined) return { ...named, action: "refused", refusal: { by: "schema", ...schema } };
  const existing = store.find(object);
  let next: Obj = existing ? applied(existing, object) : object;
  if (own) {
    const verdict = judge(ctx.kinds, next as ManifestObject, existing as ManifestObject | undefined);
    if (!verdict.ok) {
      const { message, causes } = verdict;
      const line = item.lineOf?.(refusedField(causes?.[0] ?? message));
      const refusal = { by: "schema", message, ...(causes ? { causes } : {}) };
      return { ...named, action: "refused", refusal, ...(line ? { line } : {}) };
    }
    next = verdict.object as Obj;
  }
  const schemaOf = ctx.kinds.get(`${object.apiVersion}/${object.kind}`)?.schema;
  const refusal = await admit(ctx.policies, ctx.webhooks, {
    type,
    op: existing ? "UPDATE" : "CREATE",
    object: next,
    oldObject: existing,
    namespace,
    ...(schemaOf ? { schema: schemaOf } : {}),
  }, ctx.call);
  if (refusal) return { ...named, action: "refused", refusal };
  if (!existing) {
    store.create(next);
    return { ...named, action: "create" };
  }
  return { ...named, action: store.replace(next) ? "update" : "unchanged" };
}

/** The field a schema refusal names first: `spec.a` of `… is invalid: spec.a: …` or of `unknown field "spec.a"`. */
function refusedField(message: string): string {
  return /unknown field "([^"]+)"/.exec(message)?.[1] ??
    /(?:is invalid: |^)([\w.[\]-]+): /.exec(message)?.[1] ?? "";
}

/**
 * The words kubectl prints for an object of a group the install's CRDs define in a version or kind they do not
 * serve (`butler.butlerlabs.dev/v1alpha2`); `undefined` for every other object.
 */
function unservedKind(kinds: ReadonlyMap<string, KindSchema>, o: Obj): string | undefined {
  const group = groupOf(o.apiVersion);
  const kind = kindOf(kinds, o);
  const ours = [...kinds.values()].some((k) => k.group === group);
  return group && ours && typeof kind === "string" ? kind : undefined;
}

/** The kinds a plan knows: the built-in ones it stores and those of the install's CRDs. */
export function installResources(install: readonly Obj[]): Resources {
  const crds = install.filter((m) => m.kind === "CustomResourceDefinition");
  return new Resources([...BUILTIN_RESOURCES, ...crdResources(crds)]);
}

/**
 * An applied manifest over the stored object: what the manifest sets replaces (`spec` and other top-level
 * fields; labels and annotations key by key), the server's fields and `status` stay.
 */
function applied(existing: Obj, manifest: Obj): Obj {
  const { metadata, status: _status, ...fields } = manifest;
  return {
    ...existing,
    ...fields,
    metadata: {
      ...existing.metadata,
      ...(metadata.labels ? { labels: { ...existing.metadata.labels, ...metadata.labels } } : {}),
      ...(metadata.annotations
        ? { annotations: { ...existing.metadata.annotations, ...metadata.annotations } }
        : {}),
    },
  };
}
