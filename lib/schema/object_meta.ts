/**
 * An object's `metadata` checked as the API server checks it on a create or an update
 * (`k8s.io/apimachinery/pkg/api/validation`'s `ValidateObjectMetaAccessor` and `ValidateObjectMetaAccessorUpdate`):
 * its name by its kind's rule, `generateName`, its namespace, labels, annotations and their total size, owner
 * references and finalizers, in the API server's order and words. The finalizer names it would warn about on a
 * create (`WarningsOnCreate` of custom resources) are given too.
 *
 * @module
 */
import { marshalJSON, quote } from "../gostd/mod.ts";
import { fnv1a32 } from "../hash/mod.ts";
import type { FieldError } from "./field_error.ts";
import { byteLength, isQualifiedName, isValidLabelValue, NAME_RULES, type NameRule } from "./names.ts";

/** `metadata` as decoded: every field of the types ObjectMeta gives it (see {@linkcode metadataDecodeError}). */
export interface ObjectMetaFields {
  readonly name?: string;
  readonly generateName?: string;
  readonly namespace?: string;
  readonly generation?: number;
  readonly labels?: Readonly<Record<string, string>> | null;
  readonly annotations?: Readonly<Record<string, string>> | null;
  readonly ownerReferences?: readonly OwnerReference[] | null;
  readonly finalizers?: readonly string[] | null;
}

/** An owner reference as decoded. */
export interface OwnerReference {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly uid?: string;
  readonly controller?: boolean | null;
  readonly blockOwnerDeletion?: boolean | null;
}

/** The most annotations may hold, keys and values together, in bytes. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

const invalid = (field: string, value: unknown, detail: string): FieldError => ({
  field,
  type: "Invalid value",
  value,
  detail,
});

/** `gvk.String()` of an owner reference's apiVersion and kind (`/v1, Kind=Event`), and its version. */
function ownerGvk(apiVersion: string, kind: string): { version: string; text: string } {
  const slashes = apiVersion.split("/").length - 1;
  const [group, version] = apiVersion === "" || apiVersion === "/"
    ? ["", ""]
    : slashes === 0
    ? ["", apiVersion]
    : slashes === 1
    ? apiVersion.split("/") as [string, string]
    : ["", ""];
  return { version, text: `${group}/${version}, Kind=${kind}` };
}

/** An owner reference as `json.Marshal` writes the struct: its fields in their order, the optional ones when set. */
function ownerJSON(r: OwnerReference): string {
  const fields = [
    `"apiVersion":${marshalJSON(r.apiVersion ?? "")}`,
    `"kind":${marshalJSON(r.kind ?? "")}`,
    `"name":${marshalJSON(r.name ?? "")}`,
    `"uid":${marshalJSON(r.uid ?? "")}`,
    ...(typeof r.controller === "boolean" ? [`"controller":${r.controller}`] : []),
    ...(typeof r.blockOwnerDeletion === "boolean" ? [`"blockOwnerDeletion":${r.blockOwnerDeletion}`] : []),
  ];
  return `{${fields.join(",")}}`;
}

function ownerReferenceErrors(refs: readonly OwnerReference[]): FieldError[] {
  const at = "metadata.ownerReferences";
  const errs: FieldError[] = [];
  let firstController = "";
  for (const r of refs) {
    const gvk = ownerGvk(r.apiVersion ?? "", r.kind ?? "");
    if (!gvk.version) errs.push(invalid(`${at}.apiVersion`, r.apiVersion ?? "", "version must not be empty"));
    if (!r.kind) errs.push(invalid(`${at}.kind`, r.kind ?? "", "must not be empty"));
    if (!r.name) errs.push(invalid(`${at}.name`, r.name ?? "", "must not be empty"));
    if (!r.uid) errs.push(invalid(`${at}.uid`, r.uid ?? "", "must not be empty"));
    if (gvk.text === "/v1, Kind=Event") {
      errs.push({ ...invalid(at, r, `${gvk.text} is disallowed from being an owner`), shown: ownerJSON(r) });
    }
    if (r.controller === true) {
      const name = `${r.kind ?? ""}/${r.name ?? ""}`;
      if (!firstController) firstController = name;
      else {
        errs.push({
          ...invalid(
            at,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${name}`,
          ),
          shown: `[${refs.map(ownerJSON).join(",")}]`,
        });
      }
    }
  }
  return errs;
}

function labelErrors(labels: Readonly<Record<string, string>>): FieldError[] {
  return Object.entries(labels).flatMap(([k, v]) => [
    ...isQualifiedName(k).map((m) => invalid("metadata.labels", k, m)),
    ...isValidLabelValue(v).map((m) => invalid("metadata.labels", v, m)),
  ]);
}

function annotationErrors(annotations: Readonly<Record<string, string>>): FieldError[] {
  const errs = Object.keys(annotations).flatMap((k) =>
    isQualifiedName(k.toLowerCase()).map((m) => invalid("metadata.annotations", k, m))
  );
  const size = Object.entries(annotations).reduce((n, [k, v]) => n + byteLength(k) + byteLength(v), 0);
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) {
    errs.push({
      field: "metadata.annotations",
      type: "Too long",
      detail: `may not be more than ${TOTAL_ANNOTATION_SIZE_LIMIT} bytes`,
    });
  }
  return errs;
}

function finalizerErrors(finalizers: readonly string[]): FieldError[] {
  const errs = finalizers.flatMap((f) => isQualifiedName(f).map((m) => invalid("metadata.finalizers", f, m)));
  if (finalizers.includes("orphan") && finalizers.includes("foregroundDeletion")) {
    errs.push(
      invalid(
        "metadata.finalizers",
        finalizers,
        "finalizer orphan and foregroundDeletion cannot be both set",
      ),
    );
  }
  return errs;
}

/** The fields both a create and an update check: labels, annotations, owner references. */
function commonErrors(meta: ObjectMetaFields): FieldError[] {
  return [
    ...labelErrors(meta.labels ?? {}),
    ...annotationErrors(meta.annotations ?? {}),
    ...ownerReferenceErrors(meta.ownerReferences ?? []),
  ];
}

/**
 * The errors of a created object's metadata (the name already generated from `generateName`, as the API server
 * does before it validates), for a kind whose names follow `nameRule` and that is namespaced or not.
 *
 * @example
 * ```ts
 * objectMetaErrors({ name: "Payments" }, { namespaced: false, nameRule: NAME_RULES.dnsSubdomain });
 * // [{ field: "metadata.name", type: "Invalid value", value: "Payments", detail: "a lowercase RFC 1123 subdomain ..." }]
 * ```
 */
export function objectMetaErrors(
  meta: ObjectMetaFields,
  kind: { readonly namespaced: boolean; readonly nameRule: NameRule },
): FieldError[] {
  const errs: FieldError[] = [];
  if (meta.generateName) {
    errs.push(
      ...kind.nameRule(meta.generateName, true).map((m) =>
        invalid("metadata.generateName", meta.generateName, m)
      ),
    );
  }
  if (!meta.name) {
    errs.push({ field: "metadata.name", type: "Required value", detail: "name or generateName is required" });
  } else errs.push(...kind.nameRule(meta.name, false).map((m) => invalid("metadata.name", meta.name, m)));
  if (kind.namespaced) {
    if (!meta.namespace) errs.push({ field: "metadata.namespace", type: "Required value" });
    else {
      errs.push(
        ...NAME_RULES.dnsLabel(meta.namespace, false).map((m) =>
          invalid("metadata.namespace", meta.namespace, m)
        ),
      );
    }
  }
  if ((meta.generation ?? 0) < 0) {
    errs.push(invalid("metadata.generation", meta.generation, "must be greater than or equal to 0"));
  }
  return [...errs, ...commonErrors(meta), ...finalizerErrors(meta.finalizers ?? [])];
}

/**
 * The errors of an updated object's metadata: labels, annotations and owner references (the name, namespace and
 * finalizers are not checked again; the plan never changes a name).
 */
export function objectMetaUpdateErrors(meta: ObjectMetaFields): FieldError[] {
  return commonErrors(meta);
}

const STANDARD_FINALIZERS: ReadonlySet<string> = new Set(["orphan", "foregroundDeletion", "kubernetes"]);

/**
 * The warnings a custom resource's create answers for its finalizers (new ones, on an update), as the API server
 * words them: a name that is not a qualified name, or one without a domain.
 *
 * @example
 * ```ts
 * finalizerWarnings(["cleanup"]);
 * // ['metadata.finalizers: "cleanup": prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers']
 * ```
 */
export function finalizerWarnings(finalizers: readonly string[], old: readonly string[] = []): string[] {
  const added = [...new Set(finalizers)].filter((f) => !old.includes(f)).sort();
  return added.flatMap((f) => {
    const at = `metadata.finalizers: ${quote(f)}: `;
    const warnings = isQualifiedName(f).map((m) => at + m);
    if (f.split("/").length === 1 && !STANDARD_FINALIZERS.has(f)) {
      warnings.push(
        at +
          (f.includes(".")
            ? "prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"
            : "prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"),
      );
    }
    return warnings;
  });
}

/** The letters a generated name's suffix is made of (`k8s.io/apimachinery/pkg/util/rand`). */
const NAME_LETTERS = "bcdfghjklmnpqrstvwxz2456789";

/**
 * The name the API server gives an object created with `generateName` and no name: the prefix (cut to 58 bytes)
 * and five letters. The API server draws them at random; the plan derives them from `seed`, so a plan is the same
 * every time.
 *
 * @example
 * ```ts
 * generatedName("web-", "seed"); // "web-" and five of "bcdfghjklmnpqrstvwxz2456789"
 * ```
 */
export function generatedName(generateName: string, seed: string): string {
  const bytes = new TextEncoder().encode(generateName);
  const base = bytes.length > 58 ? new TextDecoder().decode(bytes.slice(0, 58)) : generateName;
  let h = fnv1a32(seed);
  let suffix = "";
  for (let i = 0; i < 5; i++) {
    suffix += NAME_LETTERS[h % NAME_LETTERS.length];
    h = fnv1a32(String(h), h);
  }
  return base + suffix;
}
