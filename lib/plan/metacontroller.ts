import { objectKey, type RelatedResourceRule } from "../contract/mod.ts";
import { matchesSelector } from "./api.ts";
import { groupOf, type ResourceType } from "./resources.ts";
import { describe, type Obj, objectId, type Store } from "./store.ts";

/** How Metacontroller updates an existing child of a rule (`OnDelete` never does). */
export type UpdateMethod = "OnDelete" | "Recreate" | "InPlace" | "RollingRecreate" | "RollingInPlace";

/** A child (or attachment) rule of a controller. */
export interface ChildRule {
  readonly apiVersion: string;
  readonly resource: string;
  readonly method: UpdateMethod;
}

/** A CompositeController or DecoratorController as the plan runs it: what it watches, owns and calls. */
export interface ControllerSpec {
  /** The controller object itself: hooks receive it as `controller`. */
  readonly object: Obj;
  readonly name: string;
  readonly type: "composite" | "decorator";
  readonly parents: readonly { readonly apiVersion: string; readonly resource: string }[];
  readonly children: readonly ChildRule[];
  readonly generateSelector: boolean;
  /** Route paths of the hooks (the path of each webhook URL). */
  readonly hooks: { readonly sync: string; readonly finalize?: string; readonly customize?: string };
}

// deno-lint-ignore no-explicit-any
function hookPath(hook: any, controller: string, name: string): string | undefined {
  if (hook === undefined) return undefined;
  const webhook = hook.webhook ?? {};
  const path = webhook.url ? new URL(webhook.url).pathname : webhook.path;
  if (typeof path !== "string") {
    throw new Error(`controller ${controller}: hook ${name} has no webhook url or path`);
  }
  return path;
}

/**
 * The controllers of a set of manifests (CompositeControllers and DecoratorControllers; other kinds ignored),
 * read from the same objects `kubectl apply -k manifests/` installs.
 */
export function controllerSpecs(manifests: readonly Obj[]): ControllerSpec[] {
  return manifests.filter((m) =>
    m.apiVersion === "metacontroller.k8s.io/v1alpha1" &&
    (m.kind === "CompositeController" || m.kind === "DecoratorController")
  ).map((m) => {
    const composite = m.kind === "CompositeController";
    const spec = m.spec ?? {};
    const name = m.metadata.name;
    const rules = (composite ? spec.childResources : spec.attachments) ?? [];
    const hooks = spec.hooks ?? {};
    const sync = hookPath(hooks.sync, name, "sync");
    if (!sync) throw new Error(`controller ${name}: no sync hook`);
    const finalize = hookPath(hooks.finalize, name, "finalize");
    const customize = hookPath(hooks.customize, name, "customize");
    return {
      object: m,
      name,
      type: composite ? "composite" : "decorator",
      parents: composite ? [spec.parentResource] : spec.resources,
      children: rules.map((
        r: { apiVersion: string; resource: string; updateStrategy?: { method?: UpdateMethod } },
      ) => ({
        apiVersion: r.apiVersion,
        resource: r.resource,
        method: r.updateStrategy?.method ?? "OnDelete",
      })),
      generateSelector: composite && spec.generateSelector === true,
      hooks: { sync, ...(finalize ? { finalize } : {}), ...(customize ? { customize } : {}) },
    } satisfies ControllerSpec;
  });
}

/** Answer of one hook call: the HTTP status and the parsed body (when it is JSON). */
export interface HookAnswer {
  readonly status: number;
  // deno-lint-ignore no-explicit-any
  readonly body: any;
}

/** Calls one of our routes with a JSON body, the way Metacontroller's webhook client does. */
export type HookCall = (path: string, body: unknown) => Promise<HookAnswer>;

function failure(hook: string, answer: HookAnswer): string {
  const detail = typeof answer.body?.error === "string" ? answer.body.error : JSON.stringify(answer.body);
  return `${hook} hook failed (HTTP ${answer.status}): ${detail}`;
}

const controllerRefOf = (o: Obj) =>
  (o.metadata.ownerReferences ?? []).find((r: { controller?: boolean }) => r.controller === true);

function typeOfRule(store: Store, rule: { apiVersion: string; resource: string }): ResourceType {
  const type = store.resources.ofResource(groupOf(rule.apiVersion), rule.resource);
  if (!type) throw new Error(`the plan does not know resource ${rule.resource} of ${rule.apiVersion}`);
  return type;
}

/** The objects one related rule of a customize answer selects (Metacontroller's `customize/manager.go`). */
function selectRelated(store: Store, rule: RelatedResourceRule): Obj[] {
  const type = typeOfRule(store, rule);
  const inNamespace = store.list(type).filter((o) =>
    rule.namespace === undefined || o.metadata.namespace === rule.namespace
  );
  if (rule.names) return inNamespace.filter((o) => rule.names!.includes(o.metadata.name));
  const namespaceType = store.resources.ofKind("v1", "Namespace")!;
  return inNamespace.filter((o) =>
    matchesSelector(o.metadata.labels, rule.labelSelector) &&
    (rule.namespaceSelector === undefined ||
      matchesSelector(
        store.get(namespaceType, undefined, o.metadata.namespace ?? "")?.metadata.labels,
        rule.namespaceSelector,
      ))
  );
}

/** One object a parent's customize answer named: its kind, namespace and name, and whether it exists. */
export interface NamedRead {
  readonly id: string;
  readonly kind: string;
  /** `Kind namespace/name`, as the plan names objects. */
  readonly name: string;
  /** `namespace/name` (or `name`), as the controllers' messages name it. */
  readonly key: string;
  readonly found: boolean;
}

/**
 * What one reconcile did: an error when a hook failed or a child could not be applied, and the objects its
 * customize answer named (the parent's references, as its own controller reads them).
 */
export interface ReconcileResult {
  readonly error?: string;
  readonly reads?: readonly NamedRead[];
}

/** The objects a related rule names, found or not. */
function namedReads(store: Store, rule: RelatedResourceRule, selected: readonly Obj[]): NamedRead[] {
  if (!rule.names) return [];
  const type = typeOfRule(store, rule);
  return rule.names.map((name) => {
    const namespace = type.namespaced ? rule.namespace : undefined;
    const o = { apiVersion: type.apiVersion, kind: type.kind, metadata: { name, namespace } };
    return {
      id: objectId(o),
      kind: type.kind,
      name: describe(o),
      key: namespace ? `${namespace}/${name}` : name,
      found: selected.some((s) => s.metadata.name === name),
    };
  });
}

/**
 * One sync (or finalize) of one parent, applied the way Metacontroller applies it: the finalizer added first,
 * customize asked, related objects selected, observed children claimed by controller reference, the answer's
 * status and (decorator) labels and annotations written, children created, updated by their rule's method and
 * deleted when left out. A failed hook changes nothing (Metacontroller's `syncParentObject`).
 */
export async function reconcile(
  store: Store,
  spec: ControllerSpec,
  current: Obj,
  call: HookCall,
): Promise<ReconcileResult> {
  let parent = store.find(current);
  if (!parent) return {};
  const deleting = Boolean(parent.metadata.deletionTimestamp);
  const finalizer = `metacontroller.io/${
    spec.type === "composite" ? "composite" : "decorator"
  }controller-${spec.name}`;
  const finalizers: string[] = parent.metadata.finalizers ?? [];
  if (spec.hooks.finalize && !deleting && !finalizers.includes(finalizer)) {
    store.replace({ ...parent, metadata: { ...parent.metadata, finalizers: [...finalizers, finalizer] } });
    parent = store.find(parent)!;
  }

  const related: Record<string, Record<string, Obj>> = {};
  const reads: NamedRead[] = [];
  if (spec.hooks.customize) {
    const answer = await call(spec.hooks.customize, { controller: spec.object, parent });
    if (answer.status !== 200) return { error: failure("customize", answer) };
    for (const rule of answer.body.relatedResources) {
      const group = related[`${typeOfRule(store, rule).kind}.${rule.apiVersion}`] ??= {};
      const selected = selectRelated(store, rule);
      for (const o of selected) group[objectKey(o)] = o;
      reads.push(...namedReads(store, rule, selected));
    }
  }

  const { observed, groups } = observedChildren(store, spec, parent);

  const hook = deleting ? spec.hooks.finalize ?? spec.hooks.sync : spec.hooks.sync;
  const body = spec.type === "composite"
    ? { controller: spec.object, parent, children: groups, related, finalizing: deleting }
    : { controller: spec.object, object: parent, attachments: groups, related, finalizing: deleting };
  const answer = await call(hook, body);
  if (answer.status !== 200) return { error: failure(deleting ? "finalize" : "sync", answer), reads };
  const res = answer.body;

  const next = answered(structuredClone(store.find(parent)!), spec, res);
  if (deleting && res.finalized) {
    next.metadata.finalizers = finalizers.filter((f) => f !== finalizer);
  }
  store.replace(next);

  const error = manageChildren(
    store,
    spec,
    next,
    observed,
    (spec.type === "composite" ? res.children : res.attachments) ?? [],
  );
  const after = store.find(next);
  if (after?.metadata.deletionTimestamp && !(after.metadata.finalizers ?? []).length) store.remove(after);
  return error ? { error, reads } : { reads };
}

/** The children a parent has: those of its child types whose controller reference is the parent, by group. */
function observedChildren(store: Store, spec: ControllerSpec, parent: Obj) {
  const uid = parent.metadata.uid;
  const observed = spec.children.flatMap((rule) =>
    store.list(typeOfRule(store, rule), parent.metadata.namespace).filter((o) =>
      controllerRefOf(o)?.uid === uid &&
      (spec.type === "composite" ||
        o.metadata.annotations?.["metacontroller.k8s.io/decorator-controller"] === spec.name)
    )
  );
  const groups: Record<string, Record<string, Obj>> = Object.fromEntries(
    spec.children.map((rule) => [`${typeOfRule(store, rule).kind}.${rule.apiVersion}`, {}]),
  );
  for (const o of observed) {
    const rule = spec.children.find((r) => typeOfRule(store, r).kind === o.kind)!;
    groups[`${o.kind}.${rule.apiVersion}`]![objectKey(o)] = o;
  }
  return { observed, groups };
}

/**
 * The parent with a hook's answer written: a composite's status (with `observedGeneration`), a decorator's status,
 * labels and annotations (a null value removes the key).
 */
// deno-lint-ignore no-explicit-any
function answered(next: Obj, spec: ControllerSpec, res: any): Obj {
  if (spec.type === "composite") {
    next.status = { ...(res.status ?? {}), observedGeneration: next.metadata.generation };
    return next;
  }
  if (res.status != null) next.status = res.status;
  for (const field of ["labels", "annotations"] as const) {
    if (!res[field]) continue;
    const merged = { ...next.metadata[field] };
    for (const [k, v] of Object.entries(res[field])) v === null ? delete merged[k] : (merged[k] = v);
    next.metadata[field] = merged;
  }
  return next;
}

/**
 * A desired child as Metacontroller writes it: in the parent's namespace unless it names one, labelled
 * `controller-uid` (a composite with `generateSelector`) or annotated with the decorator's name, and controlled by the
 * parent.
 */
export function ownedChild(spec: ControllerSpec, parent: Obj, desired: Obj): Obj {
  const child = structuredClone(desired);
  child.metadata.namespace ??= parent.metadata.namespace;
  if (spec.generateSelector) {
    child.metadata.labels = { "controller-uid": parent.metadata.uid, ...child.metadata.labels };
  } else if (spec.type === "decorator") {
    child.metadata.annotations = {
      ...child.metadata.annotations,
      "metacontroller.k8s.io/decorator-controller": spec.name,
    };
  }
  child.metadata.ownerReferences = [{
    apiVersion: parent.apiVersion,
    kind: parent.kind,
    name: parent.metadata.name,
    uid: parent.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  }];
  return child;
}

/**
 * An existing child updated in place by a desired one, as Metacontroller applies it: the desired fields replace
 * (status aside), labels and annotations merge key by key, and the desired owner references replace.
 */
export function updatedInPlace(existing: Obj, desired: Obj): Obj {
  const { metadata, status: _status, ...fields } = desired;
  return {
    ...existing,
    ...fields,
    metadata: {
      ...existing.metadata,
      labels: { ...existing.metadata.labels, ...metadata.labels },
      ...(metadata.annotations || existing.metadata.annotations
        ? { annotations: { ...existing.metadata.annotations, ...metadata.annotations } }
        : {}),
      ownerReferences: metadata.ownerReferences,
    },
  };
}

function manageChildren(
  store: Store,
  spec: ControllerSpec,
  parent: Obj,
  observed: readonly Obj[],
  desired: readonly Obj[],
): string | undefined {
  const errors: string[] = [];
  const wanted = new Set<string>();
  for (const d of desired) {
    const rule = spec.children.find((r) =>
      r.apiVersion === d.apiVersion && typeOfRule(store, r).kind === d.kind
    );
    if (!rule) {
      errors.push(
        `the hook returned ${describe(d)}, whose type ${d.kind}.${d.apiVersion} is not a declared child`,
      );
      continue;
    }
    const child = ownedChild(spec, parent, d);
    wanted.add(objectId(child));
    const existing = store.find(child);
    if (!existing) {
      store.create(child);
      continue;
    }
    const owner = controllerRefOf(existing);
    if (owner && owner.uid !== parent.metadata.uid) {
      errors.push(`${describe(child)} already exists and is controlled by ${owner.kind} ${owner.name}`);
      continue;
    }
    if (owner && rule.method === "OnDelete") continue;
    store.replace(updatedInPlace(existing, child));
  }
  for (const o of observed) {
    if (!wanted.has(objectId(o))) store.delete(o);
  }
  return errors.length ? errors.join("; ") : undefined;
}
