/**
 * The stored adversary's points: for every kind a team role may write (`writable.ts`, read from the RBAC and the
 * CRDs), objects at the bounds in the costliest shapes, each a point the tier stores on the real API server.
 *
 * - **at bounds**: every field the schema bounds, at its bound (strings at `maxLength`, in ASCII and in wide
 *   characters; lists at `maxItems`; numbers at their largest), but where the kind's base object says what must
 *   resolve (references, the team's own members);
 * - **free-form**: every `x-kubernetes-preserve-unknown-fields` place, holding each shape of `shapes.ts` at the
 *   size the API server stores;
 * - **metadata**: the places ObjectMeta leaves to a writer (annotations: 256 KiB in all; labels and finalizers:
 *   as many as the object's size allows), for every kind;
 * - **kubeconfig**: the tenant kubeconfig Secret the reporter reads, at its bound in YAML's costliest shapes and
 *   past it;
 * - **reproductions**: the concrete points of issue #55 (five clusters of 1.4 MB of `{}`, ten of 1.1 MiB, 33
 *   ProviderConfigs with 256 KiB annotations).
 *
 * Pure: the tier stores what this builds, and shrinks a point the API server finds too large.
 *
 * @module
 */
import { freeFormPaths, hostileTeamSpec, type Schema, type Target } from "./writable.ts";
import {
  manyFinalizers,
  manyLabels,
  STRING_MAP_SHAPES,
  stringMapShape,
  VALUE_SHAPES,
  valueShape,
  WIDE,
} from "./shapes.ts";

/** An object as sent to the API server. */
// deno-lint-ignore no-explicit-any
export type Obj = Record<string, any>;

/** Where the generated team lives and what its objects refer to. */
export interface Context {
  readonly team: string;
  readonly namespace: string;
  /** The team's own ProviderConfig in IPAM elastic mode, which its clusters use (the reporter serves them). */
  readonly providerConfig: string;
  /** The tenant API server a kubeconfig at its bound names (a test server), and its CA (PEM). */
  readonly tenantServer: string;
  readonly tenantCa: string;
}

/** One point of the search: an object (or several copies) to store. */
export interface Point {
  /** A short name, unique, also the stored objects' name prefix. */
  readonly id: string;
  readonly family: "at-bounds" | "free-form" | "metadata" | "kubeconfig" | "reproduction";
  readonly kind: string;
  /** The field path (`[]`: an item) and the shape put there. */
  readonly place: string;
  readonly shape: string;
  /** The size asked for, in bytes of JSON (the tier shrinks it when the API server refuses the size). */
  readonly bytes: number;
  readonly copies: number;
  /** The object (or, for a kind written by update, the merge patch) to store as `name`, about `bytes` in size. */
  object(name: string, bytes: number): Obj;
}

/** The largest JSON object the API server keeps (etcd's 1.5 MiB request, less what the server adds). */
export const OBJECT_BYTES = 1_400_000;
/** The most bytes of annotations (keys and values) a kind may hold: the API server's bound. */
export const ANNOTATION_BYTES = 256 * 1024 - 64;
/** The reporter's bound on a tenant kubeconfig, in bytes (`KUBECONFIG_MAX_BYTES`, docs/security.md). */
export const KUBECONFIG_BYTES = 16 * 1024;
/** The most bytes a Secret's data may hold: the API server's bound. */
export const SECRET_BYTES = 1024 * 1024;

const INT32_MAX = 2 ** 31 - 1;

/**
 * The size of the shapes that are many small nodes (empty objects, keys, labels, finalizers) in the default slice:
 * the API server spends about 30 µs of CPU a node to store one, over a minute for 1.4 MB of `{}` on a busy
 * machine; strings and deep nesting, cheap to store, are at their bounds in every run (but a Team's nesting:
 * `sized`), and issue #55's reproductions at their sizes.
 */
export const SLICE_NODE_BYTES = 96 * 1024;

/** Which points: `slice` (CI's) or `full` (every shape at the bounds). */
export type Extent = "slice" | "full";

const NODE_HEAVY = new Set(["empties", "keyOrders", "manyKeys", "manyItems"]);

/**
 * The size a point of `shape` in a `kind` is built to, of at most `bound` bytes. In the slice, deep nesting in a
 * Team is built {@linkcode SLICE_NODE_BYTES} (700 levels): the Team's admission policies walk its quota specs
 * on every write, and 10,000 levels took the API server 25 to 30 s a write; a TenantCluster's is at its bound.
 */
function sized(shape: string, bound: number, extent: Extent, kind = ""): number {
  const heavy = NODE_HEAVY.has(shape) || (shape === "deep" && kind === "Team");
  return extent === "full" || !heavy ? bound : Math.min(bound, SLICE_NODE_BYTES);
}

/** The base object of each kind: what must resolve for a team to store it at all (references, members). */
function base(kind: string, name: string, ctx: Context): Obj {
  const meta = { name, namespace: ctx.namespace };
  const api = "butler.butlerlabs.dev/v1alpha1";
  switch (kind) {
    case "TenantCluster":
      return {
        apiVersion: api,
        kind,
        metadata: meta,
        spec: {
          teamRef: { name: ctx.team },
          providerConfigRef: { name: ctx.providerConfig, namespace: ctx.namespace },
        },
      };
    case "ProviderConfig":
      return { apiVersion: api, kind, metadata: meta, spec: providerConfigSpec(ctx) };
    case "Secret":
      return { apiVersion: "v1", kind, metadata: meta, type: "Opaque", data: {} };
    case "Team":
      // Written by merge patch: what changes, and the members that keep the team's admin one.
      return { spec: { access: hostileTeamSpec().access } };
    default:
      throw new Error(`no base object for ${kind}`);
  }
}

/** The team's own ProviderConfig: Proxmox, IPAM in elastic mode, scoped to the team. */
export function providerConfigSpec(ctx: Pick<Context, "team" | "namespace">): Obj {
  return {
    provider: "proxmox",
    credentialsRef: { name: "proxmox-credentials", namespace: ctx.namespace },
    proxmox: { endpoint: "https://proxmox.example.com:8006", nodes: ["pve-1"], storage: "local-lvm" },
    scope: { type: "team", teamRef: { name: ctx.team } },
    network: {
      mode: "ipam",
      poolRefs: [{ name: "hostile-pool" }],
      loadBalancer: { allocationMode: "elastic", initialPoolSize: 2, growthIncrement: 2 },
    },
  };
}

/** A string of `length` characters of `charset`, beginning with `salt` (so list items stay distinct). */
function text(length: number, charset: "ascii" | "wide", salt: string): string {
  const fill = charset === "ascii" ? "a" : WIDE;
  return (salt + fill.repeat(Math.max(0, length - salt.length))).slice(0, Math.max(length, salt.length));
}

/** What the at-bounds walk found: each leaf path it filled, and the bounded places that have no bound. */
export interface Filled {
  readonly leaves: string[];
  readonly unbounded: string[];
}

/**
 * Every member of `schema` at its bound, `keep` (the base) winning where it says something: a string at
 * `maxLength` (if its pattern allows one; else the base's or none), a list at `maxItems` (the base's items
 * first), a number at its largest, a free-form object empty (the free-form family fills it).
 */
export function atBounds(
  schema: Schema,
  charset: "ascii" | "wide",
  keep: unknown,
  path: string,
  filled: Filled,
  salt = "",
): unknown {
  if (keep !== undefined && (typeof keep !== "object" || keep === null)) return keep;
  if (schema.enum) return keep ?? schema.enum[0];
  if (schema["x-kubernetes-int-or-string"] || schema.anyOf || schema.format === "date-time") return keep;
  switch (schema.type) {
    case "object": {
      if (!schema.properties) return keep ?? {};
      const out: Obj = { ...(keep as Obj | undefined) };
      for (const [k, s] of Object.entries(schema.properties)) {
        const v = atBounds(s, charset, out[k], path ? `${path}.${k}` : k, filled, salt);
        if (v !== undefined) out[k] = v;
      }
      return out;
    }
    case "array": {
      const items = schema.items ?? {};
      const max = schema.maxItems ?? (filled.unbounded.push(path), 16);
      const kept = (keep as unknown[] | undefined) ?? [];
      const generated = Array.from(
        { length: Math.max(0, max - kept.length) },
        (_, i) => atBounds(items, charset, undefined, `${path}[]`, filled, `${salt}${kept.length + i}`),
      ).filter((v) => v !== undefined);
      return [...kept, ...generated];
    }
    case "string": {
      if (schema.maxLength === undefined) {
        filled.unbounded.push(path);
        return undefined;
      }
      for (const cs of [charset, "ascii"] as const) {
        const candidate = text(schema.maxLength, cs, salt);
        if (!schema.pattern || new RegExp(schema.pattern).test(candidate)) {
          filled.leaves.push(path);
          return candidate;
        }
      }
      return undefined;
    }
    case "integer":
      filled.leaves.push(path);
      return schema.maximum ?? (schema.format === "int64" ? Number.MAX_SAFE_INTEGER : INT32_MAX);
    case "boolean":
      return true;
    default:
      return undefined;
  }
}

/** Sets `value` at `path` (`[]`: the first item, made with the required members its schema names). */
export function setAt(object: Obj, path: readonly string[], value: unknown, schema: Schema): Obj {
  const [head, ...rest] = path;
  if (head === undefined) return value as Obj;
  if (head === "[]") {
    const items = schema.items ?? {};
    const item: Obj = Object.fromEntries((items.required ?? []).map((k) => [k, "a"]));
    return [setAt(item, rest, value, items)] as unknown as Obj;
  }
  const child = schema.properties?.[head] ?? {};
  const current = (object[head] ?? (rest[0] === "[]" ? [] : {})) as Obj;
  return { ...object, [head]: setAt(current, rest, value, child) };
}

/** `{ v: shape }` for a shape that is not an object (a free-form place's type is object). */
function asObject(v: unknown): Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? v as Obj : { v };
}

/** Each target's at-bounds points, ASCII and wide. */
function atBoundsPoints(t: Target, ctx: Context): Point[] {
  return (["ascii", "wide"] as const).map((charset) => ({
    id: `${t.kind.toLowerCase()}-bounds-${charset}`,
    family: "at-bounds",
    kind: t.kind,
    place: "every bounded field",
    shape: `${charset} strings at maxLength, lists at maxItems`,
    bytes: 0,
    copies: 1,
    object(name: string) {
      const b = base(t.kind, name, ctx);
      const body = Object.fromEntries(
        Object.entries(t.schema.properties ?? {}).filter(([k]) =>
          !["apiVersion", "kind", "metadata", "status"].includes(k)
        ),
      );
      const filled: Filled = { leaves: [], unbounded: [] };
      const out = atBounds({ type: "object", properties: body }, charset, b, "", filled) as Obj;
      return t.kind === "Secret" ? { ...out, data: { hostile: btoa("x".repeat(1024)) } } : out;
    },
  }));
}

/** Each free-form place of a target, in every value shape. */
function freeFormPoints(t: Target, ctx: Context, extent: Extent): Point[] {
  return freeFormPaths(t.schema).flatMap((path) =>
    VALUE_SHAPES.map((shape) => ({
      id: `${t.kind}-${path.filter((p) => p !== "[]").slice(-2).join("-")}-${shape}`.toLowerCase(),
      family: "free-form" as const,
      kind: t.kind,
      place: path.join(".").replaceAll(".[]", "[]"),
      shape,
      bytes: sized(shape, OBJECT_BYTES, extent, t.kind),
      copies: 1,
      object: (name: string, bytes: number) =>
        setAt(base(t.kind, name, ctx), path, asObject(valueShape(shape, bytes)), t.schema),
    }))
  );
}

/** The places ObjectMeta leaves to a writer, for a target. */
function metadataPoints(t: Target, ctx: Context, extent: Extent): Point[] {
  const with_ = (name: string, meta: Obj) => {
    const b = base(t.kind, name, ctx);
    return { ...b, metadata: { ...b.metadata, ...meta } };
  };
  const id = (s: string) => `${t.kind.toLowerCase()}-meta-${s}`;
  return [
    ...STRING_MAP_SHAPES.map((shape) => ({
      id: id(`annotations-${shape}`.toLowerCase()),
      family: "metadata" as const,
      kind: t.kind,
      place: "metadata.annotations",
      shape,
      bytes: sized(shape, ANNOTATION_BYTES, extent),
      copies: 1,
      object: (name: string, bytes: number) => with_(name, { annotations: stringMapShape(shape, bytes) }),
    })),
    {
      id: id("labels"),
      family: "metadata" as const,
      kind: t.kind,
      place: "metadata.labels",
      shape: "manyKeys",
      bytes: sized("manyKeys", OBJECT_BYTES, extent),
      copies: 1,
      object: (name: string, bytes: number) => with_(name, { labels: manyLabels(bytes) }),
    },
    {
      id: id("finalizers"),
      family: "metadata" as const,
      kind: t.kind,
      place: "metadata.finalizers",
      shape: "manyItems",
      bytes: sized("manyItems", OBJECT_BYTES, extent),
      copies: 1,
      object: (name: string, bytes: number) => with_(name, { finalizers: manyFinalizers(bytes) }),
    },
  ];
}

/** The base64 of a text. */
function b64(s: string): string {
  const bytes = new TextEncoder().encode(s);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/** A kubeconfig for `ctx.tenantServer` (a bearer token), with `tail` after it, `bytes` long in all. */
function kubeconfig(ctx: Context, bytes: number, tail: (room: number) => string): string {
  const head = `apiVersion: v1\nkind: Config\ncurrent-context: t\n` +
    `clusters: [{name: t, cluster: {server: "${ctx.tenantServer}", certificate-authority-data: ${
      b64(ctx.tenantCa)
    }}}]\n` +
    `users: [{name: u, user: {token: tenant-token}}]\ncontexts: [{name: t, context: {cluster: t, user: u}}]\n`;
  const t = tail(bytes - head.length);
  return head + t + " ".repeat(Math.max(0, bytes - head.length - t.length));
}

/** YAML's costliest shapes in `room` bytes, as a member the kubeconfig reader does not use. */
const YAML_TAILS: Readonly<Record<string, (room: number) => string>> = {
  // Aliases to aliases: each level doubles what the document stands for.
  aliases: () =>
    "x0: &a0 [a, a]\n" +
    Array.from({ length: 24 }, (_, i) => `x${i + 1}: &a${i + 1} [*a${i}, *a${i}]\n`).join(""),
  empties: (room) => `x: [${"{},".repeat(Math.max(0, Math.floor((room - 8) / 3)))}{}]\n`,
  deep: (room) => {
    const depth = Math.max(1, Math.floor((room - 8) / 2));
    return `x: ${"[".repeat(depth)}${"]".repeat(depth)}\n`;
  },
  keys: (room) => Array.from({ length: Math.max(1, Math.floor(room / 12)) }, (_, i) => `k${i}: 0\n`).join(""),
};

/** Tenant kubeconfig Secrets: at the reporter's bound in each YAML shape, and past it (to the Secret's). */
function kubeconfigPoints(ctx: Context): Point[] {
  const point = (shape: string, bytes: number, tail: (room: number) => string): Point => ({
    id: `kubeconfig-${shape}-${bytes === KUBECONFIG_BYTES ? "at-bound" : "past-bound"}`,
    family: "kubeconfig",
    kind: "Secret",
    place: "data.value (the tenant kubeconfig the reporter reads)",
    shape,
    bytes,
    copies: 1,
    object: (name: string, size: number) => ({
      ...base("Secret", `${name}-kubeconfig`, ctx),
      data: { value: b64(kubeconfig(ctx, size, tail)) },
    }),
  });
  return [
    ...Object.entries(YAML_TAILS).map(([shape, tail]) => point(shape, KUBECONFIG_BYTES, tail)),
    point("empties", SECRET_BYTES - 1024, YAML_TAILS.empties!),
  ];
}

/**
 * Issue #55's concrete points. The five clusters of 1.4 MB of `{}` are, in the slice, the same 7 MB of `{}` in
 * clusters of {@linkcode SLICE_NODE_BYTES} (what the service once ran out of heap on is that much in one list page;
 * one object of 1.4 MB of them takes the API server about a minute on a busy machine, 36 smaller ones less).
 */
function reproductions(ctx: Context, targets: readonly Target[], extent: Extent): Point[] {
  const tc = targets.find((t) => t.kind === "TenantCluster")!;
  const values = (shape: "empties" | "longString") => (name: string, size: number) =>
    setAt(base("TenantCluster", name, ctx), ["spec", "addons", "[]", "values"], {
      v: valueShape(shape, size),
    }, tc.schema);
  const fiveBytes = sized("empties", OBJECT_BYTES, extent);
  return [
    {
      id: "repro-five-1.4mb",
      family: "reproduction",
      kind: "TenantCluster",
      place: "spec.addons[].values",
      shape: "empties",
      bytes: fiveBytes,
      copies: Math.ceil((5 * OBJECT_BYTES) / fiveBytes),
      object: values("empties"),
    },
    {
      // Ten objects of 1.1 MiB: over one 8 MiB page together, and each over a 1 MiB watch event.
      id: "repro-ten-1.1mib",
      family: "reproduction",
      kind: "TenantCluster",
      place: "spec.addons[].values",
      shape: "longString",
      bytes: Math.round(1.1 * 1024 * 1024),
      copies: 10,
      object: values("longString"),
    },
    {
      id: "repro-33-providerconfigs",
      family: "reproduction",
      kind: "ProviderConfig",
      place: "metadata.annotations",
      shape: "longString",
      bytes: ANNOTATION_BYTES,
      copies: 33,
      object: (name: string, size: number) => {
        const b = base("ProviderConfig", name, ctx);
        return { ...b, metadata: { ...b.metadata, annotations: stringMapShape("longString", size) } };
      },
    },
  ];
}

/**
 * Every point, for the kinds `targets` says a team may write: issue #55's reproductions first (each alone in its
 * collection is what once ended the service: five clusters of `{}` fit one list page, and a watch that later stops
 * at a larger object would never see them), then each kind's at-bounds, free-form and metadata points, then the
 * kubeconfigs.
 */
export function generatePoints(targets: readonly Target[], ctx: Context, extent: Extent = "full"): Point[] {
  return [
    ...reproductions(ctx, targets, extent),
    ...targets.flatMap((t) => [
      ...atBoundsPoints(t, ctx),
      ...freeFormPoints(t, ctx, extent),
      ...metadataPoints(t, ctx, extent),
    ]),
    ...kubeconfigPoints(ctx),
  ];
}
