/**
 * The `x-kubernetes-validations` rules of a schema, evaluated with a CEL engine and the Kubernetes CEL library
 * functions our rules call, failing in the API server's words (`apiextensions-apiserver`'s CEL validator).
 *
 * @module
 */
import { Environment } from "@marcbachmann/cel-js";
import { compare, parseQuantity, type Quantity } from "../quantity/mod.ts";
import type { FieldError } from "./field_error.ts";
import type { Schema, ValidationRule } from "./structural.ts";

/** A Kubernetes `Quantity` as CEL sees it (the `quantity()` library). */
class CelQuantity {
  constructor(readonly q: Quantity) {}
}

function toQuantity(s: string): CelQuantity {
  const parsed = s === s.trim() ? parseQuantity(s) : undefined;
  if (!parsed?.ok) throw new Error(`quantities must match the regular expression`);
  return new CelQuantity(parsed.value);
}

function isQuantity(s: string): boolean {
  return s === s.trim() && parseQuantity(s).ok;
}

const cmp = (a: CelQuantity, b: CelQuantity) => compare(a.q, b.q);

/** The CEL environment of CRD rules: optionals on, the Kubernetes quantity library registered. */
function environment(): Environment {
  const env = new Environment({
    unlistedVariablesAreDyn: true,
    enableOptionalTypes: true,
    homogeneousAggregateLiterals: false,
  }).registerType("Quantity", CelQuantity)
    .registerFunction("quantity(string): Quantity", toQuantity)
    .registerFunction("isQuantity(string): bool", isQuantity);
  const method = (
    name: string,
    params: { name: string; type: string }[],
    returnType: string,
    handler: (...a: never[]) => unknown,
  ) =>
    env.registerFunction({
      name,
      receiverType: "Quantity",
      returnType,
      params,
      handler: handler as (...a: unknown[]) => unknown,
    });
  const other = [{ name: "other", type: "Quantity" }];
  method("isLessThan", other, "bool", (a: CelQuantity, b: CelQuantity) => cmp(a, b) < 0);
  method("isGreaterThan", other, "bool", (a: CelQuantity, b: CelQuantity) => cmp(a, b) > 0);
  method("compareTo", other, "int", (a: CelQuantity, b: CelQuantity) => BigInt(cmp(a, b)));
  method("sign", [], "int", (a: CelQuantity) => BigInt(Math.sign(Number(a.q.nanos))));
  return env;
}

let shared: Environment | undefined;
const compiled = new Map<string, (vars: Record<string, unknown>) => unknown>();

function program(rule: string): (vars: Record<string, unknown>) => unknown {
  let p = compiled.get(rule);
  if (!p) {
    shared ??= environment();
    const parsed = shared.parse(rule);
    p = (vars) => parsed(vars);
    compiled.set(rule, p);
  }
  return p;
}

/**
 * A decoded JSON value as CEL values of its schema: integers (and the numbers of int-or-string fields) as `int`
 * (bigint), other numbers as `double`, objects and arrays converted member by member.
 */
export function celValue(s: Schema | undefined, v: unknown): unknown {
  if (typeof v === "number") {
    return (s?.type === "integer" || s?.["x-kubernetes-int-or-string"]) && Number.isInteger(v)
      ? BigInt(v)
      : v;
  }
  if (Array.isArray(v)) return v.map((item) => celValue(s?.items, item));
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, celValue(childSchema(s, k), item)]));
  }
  return v;
}

function childSchema(s: Schema | undefined, key: string): Schema | undefined {
  return s?.properties?.[key] ??
    (typeof s?.additionalProperties === "object" ? s.additionalProperties : undefined);
}

function ruleFailure(rule: ValidationRule, path: string, s: Schema, value: unknown): FieldError {
  const field = [path, (rule.fieldPath ?? "").replace(/^\./, "")].filter(Boolean).join(".") || "<nil>";
  const detail = rule.message?.trim() || `failed rule: ${rule.rule.trim()}`;
  const scalar = s.type !== "object" && s.type !== "array";
  switch (rule.reason) {
    case "FieldValueRequired":
      return { field, type: "Required value", detail };
    case "FieldValueForbidden":
      return { field, type: "Forbidden", detail };
    case "FieldValueDuplicate":
      return scalar ? { field, type: "Duplicate value", value } : { field, type: "Duplicate value" };
    default:
      return scalar
        ? { field, type: "Invalid value", value, detail }
        : { field, type: "Invalid value", detail };
  }
}

function evaluate(rule: ValidationRule, path: string, s: Schema, value: unknown, old: unknown): FieldError[] {
  const usesOld = /\boldSelf\b/.test(rule.rule);
  if (usesOld && old === undefined && !rule.optionalOldSelf) return [];
  let result: unknown;
  try {
    result = program(rule.rule)({
      self: celValue(s, value),
      ...(usesOld ? { oldSelf: celValue(s, old) } : {}),
    });
  } catch (err) {
    const message = err instanceof Error ? err.message.split("\n")[0] : String(err);
    return [{
      field: path || "<nil>",
      type: "Invalid value",
      detail: `${message} evaluating rule: ${rule.message?.trim() || rule.rule.trim()}`,
    }];
  }
  return result === true ? [] : [ruleFailure(rule, path, s, value)];
}

/**
 * The failed rules of `value` (and, for transition rules, `old`) under schema `s` at `path`, every level down,
 * each in the API server's words.
 *
 * @example
 * ```ts
 * celErrors({ type: "object", "x-kubernetes-validations": [{ rule: "has(self.a)", message: "a is required" }] }, {}, "spec");
 * // [{ field: "spec", type: "Invalid value", detail: "a is required" }]
 * ```
 */
export function celErrors(s: Schema, value: unknown, path = "", old?: unknown): FieldError[] {
  if (value === undefined || value === null) return [];
  const errors = (s["x-kubernetes-validations"] ?? []).flatMap((r) => evaluate(r, path, s, value, old));
  if (Array.isArray(value)) {
    if (s.items) value.forEach((item, i) => errors.push(...celErrors(s.items!, item, `${path}[${i}]`)));
  } else if (typeof value === "object") {
    for (const [k, item] of Object.entries(value)) {
      const child = childSchema(s, k);
      const oldItem = old !== null && typeof old === "object"
        ? (old as Record<string, unknown>)[k]
        : undefined;
      if (child) errors.push(...celErrors(child, item, path ? `${path}.${k}` : k, oldItem));
    }
  }
  return errors;
}
