/**
 * The shipped ValidatingAdmissionPolicies evaluated in process, as the API server evaluates them: match rules,
 * match conditions, variables and validations in CEL, with `messageExpression` and `reason`, answering in the API
 * server's words. The requester is the GitOps applier `plan` applies as, a platform admin: `authorizer` checks
 * allow it.
 *
 * @module
 */
import { celEnvironment, celValue } from "./cel.ts";
import type { Schema } from "./structural.ts";

/** One write a policy judges. */
export interface PolicyWrite {
  readonly operation: "CREATE" | "UPDATE" | "DELETE";
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly kind: string;
  readonly object: { readonly metadata: { readonly name: string; readonly namespace?: string } } & object;
  readonly oldObject?: object;
  readonly namespaceObject?: object;
  readonly userInfo: { readonly username: string; readonly groups: readonly string[] };
  /** The kind's schema, for the CEL types of its fields (integers as `int`). */
  readonly schema?: Schema;
}

/** A policy's refusal: which policy and binding, why, and the reason that sets the API server's answer. */
export interface PolicyDenial {
  readonly policy: string;
  readonly binding: string;
  readonly message: string;
  readonly reason: "Forbidden" | "Invalid";
}

interface Rule {
  readonly apiGroups?: readonly string[];
  readonly apiVersions?: readonly string[];
  readonly operations?: readonly string[];
  readonly resources?: readonly string[];
}

interface PolicyObject {
  readonly kind?: string;
  readonly metadata?: { readonly name?: string };
  readonly spec?: {
    readonly policyName?: string;
    readonly validationActions?: readonly string[];
    readonly matchConstraints?: { readonly resourceRules?: readonly Rule[] };
    readonly matchConditions?: readonly { readonly name: string; readonly expression: string }[];
    readonly variables?: readonly { readonly name: string; readonly expression: string }[];
    readonly validations?: readonly {
      readonly expression: string;
      readonly message?: string;
      readonly messageExpression?: string;
      readonly reason?: string;
    }[];
  };
}

/** A shipped policy with its Deny bindings, ready to judge writes. */
export interface AdmissionPolicy {
  readonly name: string;
  readonly bindings: readonly string[];
  /** The refusal of `write`, or `undefined` when the policy does not match it or admits it. */
  judge(write: PolicyWrite): PolicyDenial | undefined;
}

const among = (list: readonly string[] | undefined, value: string) =>
  (list ?? []).includes("*") || (list ?? []).includes(value);

function matches(rules: readonly Rule[], w: PolicyWrite): boolean {
  return rules.some((r) =>
    among(r.apiGroups, w.group) && among(r.apiVersions, w.version) && among(r.operations, w.operation) &&
    among(r.resources, w.resource)
  );
}

/** The CEL activation of a write: object, oldObject, request, namespaceObject, params, authorizer. */
function activation(w: PolicyWrite): Record<string, unknown> {
  const { name, namespace } = w.object.metadata;
  return {
    object: w.operation === "DELETE" ? null : celValue(w.schema, w.object),
    oldObject: w.oldObject === undefined ? null : celValue(w.schema, w.oldObject),
    namespaceObject: w.namespaceObject === undefined ? null : celValue(undefined, w.namespaceObject),
    params: null,
    request: {
      operation: w.operation,
      name,
      namespace: namespace ?? "",
      kind: { group: w.group, version: w.version, kind: w.kind },
      resource: { group: w.group, version: w.version, resource: w.resource },
      userInfo: { username: w.userInfo.username, groups: [...w.userInfo.groups] },
      dryRun: true,
    },
    authorizer: celEnvironment().allowingAuthorizer,
  };
}

/** cel-go's words for an evaluation error start in lower case. */
function errorWords(err: unknown): string {
  const text = err instanceof Error ? err.message.split("\n")[0]! : String(err);
  return text.startsWith("composited variable") ? text : text.charAt(0).toLowerCase() + text.slice(1);
}

/**
 * `variables`, each evaluated when first read (as the API server composes them), an error naming the variable.
 */
function lazyVariables(
  spec: NonNullable<PolicyObject["spec"]>,
  run: (expression: string) => unknown,
): Record<string, unknown> {
  const variables: Record<string, unknown> = {};
  for (const v of spec.variables ?? []) {
    let done = false;
    let value: unknown;
    Object.defineProperty(variables, v.name, {
      enumerable: true,
      get() {
        if (!done) {
          try {
            value = run(v.expression);
          } catch (err) {
            throw new Error(`composited variable "${v.name}" fails to evaluate: ${errorWords(err)}`);
          }
          done = true;
        }
        return value;
      },
    });
  }
  return variables;
}

function judgeWith(p: PolicyObject, binding: string, w: PolicyWrite): PolicyDenial | undefined {
  const spec = p.spec ?? {};
  const name = p.metadata?.name ?? "";
  if (!matches(spec.matchConstraints?.resourceRules ?? [], w)) return undefined;
  const vars = activation(w);
  const run = (expression: string) => celEnvironment().run(expression, vars);
  const deny = (message: string, reason = "Invalid"): PolicyDenial => ({
    policy: name,
    binding,
    message,
    reason: reason === "Forbidden" ? "Forbidden" : "Invalid",
  });
  let current = "";
  try {
    for (const c of spec.matchConditions ?? []) {
      current = c.expression;
      if (run(c.expression) !== true) return undefined;
    }
    vars.variables = lazyVariables(spec, run);
    for (const v of spec.validations ?? []) {
      current = v.expression;
      if (run(v.expression) === true) continue;
      const fromExpression = v.messageExpression ? run(v.messageExpression) : undefined;
      const message = typeof fromExpression === "string" && fromExpression.trim()
        ? fromExpression
        : v.message ?? `failed expression: ${v.expression}`;
      return deny(message, v.reason);
    }
  } catch (err) {
    return deny(`expression '${current}' resulted in error: ${errorWords(err)}`);
  }
  return undefined;
}

/**
 * The ValidatingAdmissionPolicies among `objects` with their `Deny` bindings.
 *
 * @example
 * ```ts
 * const policies = admissionPolicies(readInstall(root));
 * policies.find((p) => p.name === "butler-team-access")?.judge(write);
 * ```
 */
export function admissionPolicies(objects: readonly unknown[]): AdmissionPolicy[] {
  const all = objects as PolicyObject[];
  const bindings = all.filter((o) =>
    o?.kind === "ValidatingAdmissionPolicyBinding" && o.spec?.validationActions?.includes("Deny")
  );
  return all.filter((o) => o?.kind === "ValidatingAdmissionPolicy").map((p) => {
    const name = p.metadata?.name ?? "";
    const bound = bindings.filter((b) => b.spec?.policyName === name).map((b) => b.metadata?.name ?? "");
    return {
      name,
      bindings: bound,
      judge: (w: PolicyWrite) => {
        for (const b of bound) {
          const denial = judgeWith(p, b, w);
          if (denial) return denial;
        }
        return undefined;
      },
    };
  });
}

/**
 * The first of `policies` that denies `write`, or `undefined` when every one admits it (or does not match it).
 *
 * @example
 * ```ts
 * firstDenial(admissionPolicies(install), write)?.message;
 * ```
 */
export function firstDenial(
  policies: readonly AdmissionPolicy[],
  write: PolicyWrite,
): PolicyDenial | undefined {
  for (const policy of policies) {
    const denial = policy.judge(write);
    if (denial) return denial;
  }
  return undefined;
}
