/**
 * Secret values kept out of everything `plan` prints. `plan` runs in CI on a pull request's files and its output is
 * read by everyone who reads the job's log, so a Secret's `data` and `stringData` values are replaced by `***`
 * (in a diff, `*** (before)` and `*** (after)` where a value changes, as `kubectl diff` masks them), and any
 * other string printed has every Secret value it contains replaced too.
 *
 * @module
 */
import { decodeBase64 } from "../encoding/mod.ts";
import type { Obj } from "./store.ts";

/** What a masked value is printed as. */
export const MASK = "***";

/** Secret values shorter than this are masked in Secrets but not searched for in other strings (too common). */
const MIN_REDACTED = 6;

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * Whether an object may be a Secret: of kind `Secret` in any case and any `apiVersion`, so that one refused for
 * its version or its kind's spelling (`V1`, `secret`) is masked too; masking more than the core kind costs nothing.
 */
export function isSecret(o: unknown): o is Obj {
  const v = o as Obj | null;
  return !!v && typeof v === "object" && typeof v.kind === "string" && v.kind.toLowerCase() === "secret";
}

const masked = (values: unknown) =>
  values && typeof values === "object" && !Array.isArray(values)
    ? Object.fromEntries(Object.keys(values).map((k) => [k, MASK]))
    : values === undefined
    ? undefined
    : MASK;

/**
 * A Secret with its `data` and `stringData` values (and a last-applied annotation, which holds them) replaced by
 * `***`; any other object as it is.
 *
 * @example
 * ```ts
 * maskSecret({ apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, data: { k: "c2VjcmV0" } });
 * // { apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, data: { k: "***" } }
 * ```
 */
export function maskSecret<T>(o: T): T {
  if (!isSecret(o)) return o;
  const out: Obj = { ...o };
  for (const field of ["data", "stringData"]) {
    if (field in out) out[field] = masked(out[field]);
  }
  const annotations = out.metadata?.annotations;
  if (annotations && typeof annotations === "object" && LAST_APPLIED in annotations) {
    out.metadata = { ...out.metadata, annotations: { ...annotations, [LAST_APPLIED]: MASK } };
  }
  return out as T;
}

/**
 * The two sides of a Secret diff masked as `kubectl diff` masks them: a value that changes is `*** (before)` and
 * `*** (after)`, one that does not (or is on one side only) `***`.
 */
export function maskSecretPair(before: Obj, after: Obj): [Obj, Obj] {
  if (!isSecret(before) || !isSecret(after)) return [maskSecret(before), maskSecret(after)];
  const a: Obj = maskSecret(before);
  const b: Obj = maskSecret(after);
  for (const field of ["data", "stringData"]) {
    const from = before[field];
    const to = after[field];
    if (!from || !to || typeof from !== "object" || typeof to !== "object") continue;
    for (const k of Object.keys(from)) {
      if (k in to && from[k] !== to[k]) {
        a[field][k] = `${MASK} (before)`;
        b[field][k] = `${MASK} (after)`;
      }
    }
  }
  return [a, b];
}

/** Every string a Secret holds in `data` (and what it decodes to) and `stringData`. */
function secretValues(o: Obj): string[] {
  const out: string[] = [];
  for (const field of ["data", "stringData"]) {
    const values = o[field];
    if (!values || typeof values !== "object") continue;
    for (const v of Object.values(values)) {
      if (typeof v !== "string") continue;
      out.push(v);
      if (field === "data") {
        try {
          out.push(new TextDecoder("utf-8", { fatal: true }).decode(decodeBase64(v)));
        } catch { /* not base64 text: the written value is all there is */ }
      }
    }
  }
  return out;
}

/** What replaces Secret values in strings printed beside the objects (messages, notes). */
export type Redact = (s: string) => string;

/**
 * A function that replaces every Secret value of `objects` (length 6 or more; a `data` value's decoded text too,
 * and both as JSON would escape them) found in a string by `***`.
 *
 * @example
 * ```ts
 * const redact = redactor([{ apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, stringData: { t: "hunter22" } }]);
 * redact('token "hunter22" refused'); // 'token "***" refused'
 * ```
 */
export function redactor(objects: Iterable<unknown>): Redact {
  const values = new Set<string>();
  for (const o of objects) {
    if (!isSecret(o)) continue;
    for (const v of secretValues(o)) {
      for (const form of [v, JSON.stringify(v).slice(1, -1)]) {
        if (form.length >= MIN_REDACTED) values.add(form);
      }
    }
  }
  if (!values.size) return (s) => s;
  // Longest first, so that a value containing another is replaced whole.
  const sorted = [...values].sort((a, b) => b.length - a.length);
  return (s) => {
    let out = s;
    for (const v of sorted) if (out.includes(v)) out = out.split(v).join(MASK);
    return out;
  };
}

/** Every string in a JSON value passed through `redact` (keys too). */
export function redactDeep<T>(value: T, redact: Redact): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact)) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [redact(k), redactDeep(v, redact)]),
    ) as T;
  }
  return value;
}
