/**
 * The parts of a CRD's `openAPIV3Schema` the API server checks an object against, and where to find the schema
 * of a kind among the CRDs of an install.
 *
 * @module
 */

/** A CEL rule of `x-kubernetes-validations`. */
export interface ValidationRule {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly fieldPath?: string;
  readonly reason?: string;
  readonly optionalOldSelf?: boolean;
}

/** A structural schema node (the subset of `JSONSchemaProps` a structural CRD schema may use). */
export interface Schema {
  readonly type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  readonly format?: string;
  readonly properties?: Readonly<Record<string, Schema>>;
  readonly additionalProperties?: Schema | boolean;
  readonly items?: Schema;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly minProperties?: number;
  readonly maxProperties?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: boolean;
  readonly exclusiveMaximum?: boolean;
  readonly multipleOf?: number;
  readonly uniqueItems?: boolean;
  readonly nullable?: boolean;
  readonly default?: unknown;
  readonly anyOf?: readonly Schema[];
  readonly allOf?: readonly Schema[];
  readonly oneOf?: readonly Schema[];
  readonly "x-kubernetes-int-or-string"?: boolean;
  readonly "x-kubernetes-preserve-unknown-fields"?: boolean;
  readonly "x-kubernetes-embedded-resource"?: boolean;
  readonly "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  readonly "x-kubernetes-list-map-keys"?: readonly string[];
  readonly "x-kubernetes-map-type"?: "atomic" | "granular";
  readonly "x-kubernetes-validations"?: readonly ValidationRule[];
}

/** A served version of a kind, as its CRD declares it. */
export interface KindSchema {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** Whether the status subresource is on (then a create's and an update's `status` is not taken). */
  readonly statusSubresource: boolean;
  readonly schema: Schema;
}

interface CrdObject {
  readonly kind?: string;
  readonly spec?: {
    readonly group?: string;
    readonly scope?: string;
    readonly names?: { readonly kind?: string; readonly plural?: string };
    readonly versions?: readonly {
      readonly name?: string;
      readonly served?: boolean;
      readonly subresources?: { readonly status?: unknown };
      readonly schema?: { readonly openAPIV3Schema?: Schema };
    }[];
  };
}

/**
 * The served kinds of the CRDs among `objects`, keyed `group/version/Kind`.
 *
 * @example
 * ```ts
 * const kinds = crdKinds(readInstall(root));
 * kinds.get("butler.butlerlabs.dev/v1alpha1/Team")?.namespaced; // false
 * ```
 */
export function crdKinds(objects: readonly unknown[]): Map<string, KindSchema> {
  const kinds = new Map<string, KindSchema>();
  for (const o of objects as CrdObject[]) {
    if (o?.kind !== "CustomResourceDefinition" || !o.spec?.group || !o.spec.names?.kind) continue;
    for (const v of o.spec.versions ?? []) {
      if (!v.served || !v.name) continue;
      kinds.set(`${o.spec.group}/${v.name}/${o.spec.names.kind}`, {
        group: o.spec.group,
        version: v.name,
        kind: o.spec.names.kind,
        plural: o.spec.names.plural ?? "",
        namespaced: o.spec.scope !== "Cluster",
        statusSubresource: v.subresources?.status !== undefined,
        schema: v.schema?.openAPIV3Schema ?? { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      });
    }
  }
  return kinds;
}
