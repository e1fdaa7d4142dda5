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

/** An `authorizer` check that allows everything: the requester `plan` stands for is a platform admin. */
class CelResourceCheck {
  check(): CelDecision {
    return new CelDecision();
  }
}

/** What an allowing check decides. */
class CelDecision {}

/** The `authorizer` of a policy's CEL, for a requester allowed everything. */
class CelAuthorizer {}

type Method = {
  name: string;
  receiverType: string;
  returnType: string;
  params: { name: string; type: string }[];
};

function register(env: Environment, m: Method, handler: (...a: never[]) => unknown): void {
  env.registerFunction({ ...m, handler: handler as (...a: unknown[]) => unknown });
}

/**
 * The CEL environment of CRD rules and admission policies: optionals on, the Kubernetes quantity and list
 * libraries, and an `authorizer` that allows (the only requester the plan evaluates for is a platform admin).
 */
function environment(): Environment {
  const env = new Environment({
    unlistedVariablesAreDyn: true,
    enableOptionalTypes: true,
    homogeneousAggregateLiterals: false,
  }).registerType("Quantity", CelQuantity)
    .registerType("Authorizer", CelAuthorizer)
    .registerType("ResourceCheck", CelResourceCheck)
    .registerType("Decision", CelDecision)
    .registerFunction("quantity(string): Quantity", toQuantity)
    .registerFunction("isQuantity(string): bool", isQuantity);
  const q = (name: string, params: Method["params"], returnType: string) => ({
    name,
    receiverType: "Quantity",
    returnType,
    params,
  });
  const other = [{ name: "other", type: "Quantity" }];
  register(env, q("isLessThan", other, "bool"), (a: CelQuantity, b: CelQuantity) => cmp(a, b) < 0);
  register(env, q("isGreaterThan", other, "bool"), (a: CelQuantity, b: CelQuantity) => cmp(a, b) > 0);
  register(env, q("compareTo", other, "int"), (a: CelQuantity, b: CelQuantity) => BigInt(cmp(a, b)));
  register(env, q("sign", [], "int"), (a: CelQuantity) => BigInt(Math.sign(Number(a.q.nanos))));
  const text = [{ name: "value", type: "string" }];
  register(
    env,
    { name: "group", receiverType: "Authorizer", returnType: "ResourceCheck", params: text },
    () => new CelResourceCheck(),
  );
  for (const name of ["resource", "subresource", "name", "namespace"]) {
    register(
      env,
      { name, receiverType: "ResourceCheck", returnType: "ResourceCheck", params: text },
      (r: CelResourceCheck) => r,
    );
  }
  register(
    env,
    { name: "check", receiverType: "ResourceCheck", returnType: "Decision", params: text },
    (r: CelResourceCheck) => r.check(),
  );
  register(env, { name: "allowed", receiverType: "Decision", returnType: "bool", params: [] }, () => true);
  // cel-go compares optionals (`labels[?k] == oldLabels[?k]`): equal when both are empty or hold equal values;
  // `!=` follows from it.
  type Opt = { hasValue(): boolean; value(): unknown };
  const optionalEqual = (a: Opt, b: Opt) =>
    a.hasValue() === b.hasValue() && (!a.hasValue() || sameValue(a.value(), b.value()));
  env.registerOperator("optional<dyn> == optional<dyn>", optionalEqual);
  register(env, {
    name: "indexOf",
    receiverType: "list",
    returnType: "int",
    params: [{ name: "item", type: "dyn" }],
  }, (list: unknown[], item: unknown) => BigInt(list.findIndex((x) => sameValue(x, item))));
  return env;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a, (_, v) => (typeof v === "bigint" ? `${v}n` : v)) ===
    JSON.stringify(b, (_, v) => (typeof v === "bigint" ? `${v}n` : v));
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

/** The shared CEL environment: `run` evaluates an expression (compiled once) over `vars`. */
export function celEnvironment(): {
  run: (expression: string, vars: Record<string, unknown>) => unknown;
  allowingAuthorizer: unknown;
} {
  return { run: (expression, vars) => program(expression)(vars), allowingAuthorizer: AUTHORIZER };
}

const AUTHORIZER = new CelAuthorizer();

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

/**
 * Where a failed rule points in the object: its `fieldPath`, else the first field the rule reads below `self`
 * (`size(self.metadata.name) <= 58` points at `metadata.name`), else where it is declared.
 */
function ruleTarget(rule: ValidationRule, path: string): string | undefined {
  if (rule.fieldPath) return undefined;
  const read = /\bself((?:\.[A-Za-z_][\w]*)+)/.exec(
    rule.rule.replace(/'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"/g, ""),
  )?.[1];
  return read ? [path, read.slice(1)].filter(Boolean).join(".") : undefined;
}

function ruleFailure(rule: ValidationRule, path: string, s: Schema, value: unknown): FieldError {
  const field = [path, (rule.fieldPath ?? "").replace(/^\./, "")].filter(Boolean).join(".") || "<nil>";
  const detail = rule.message?.trim() || `failed rule: ${rule.rule.trim()}`;
  const scalar = s.type !== "object" && s.type !== "array";
  const target = ruleTarget(rule, path);
  const at = target ? { pointsAt: target } : {};
  switch (rule.reason) {
    case "FieldValueRequired":
      return { field, type: "Required value", detail, ...at };
    case "FieldValueForbidden":
      return { field, type: "Forbidden", detail, ...at };
    case "FieldValueDuplicate":
      return scalar
        ? { field, type: "Duplicate value", value, ...at }
        : { field, type: "Duplicate value", ...at };
    default:
      return scalar
        ? { field, type: "Invalid value", value, detail, ...at }
        : { field, type: "Invalid value", detail, ...at };
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
