import type { LabelSelector } from "../contract/mod.ts";
import { matchesSelector } from "./api.ts";
import type { HookCall } from "./metacontroller.ts";
import { groupOf, type ResourceType } from "./resources.ts";
import { type Obj, planUid } from "./store.ts";
import { type AdmissionPolicy, firstDenial, type Schema } from "../schema/mod.ts";

/** An admission operation the plan performs. */
export type Operation = "CREATE" | "UPDATE";

/** One validating webhook of a ValidatingWebhookConfiguration, as the plan calls it. */
export interface WebhookSpec {
  readonly name: string;
  /** The route path the webhook's service is called at. */
  readonly path: string;
  readonly rules: readonly {
    readonly apiGroups: readonly string[];
    readonly operations: readonly string[];
    readonly resources: readonly string[];
  }[];
  readonly failurePolicy: "Fail" | "Ignore";
  /** Which namespaces' objects it is called for (the team label on namespaces the Team controller creates). */
  readonly namespaceSelector?: LabelSelector;
}

/**
 * The webhooks of a set of manifests (every ValidatingWebhookConfiguration): the same objects the
 * base installs (manifests/admission-webhooks). Their `matchConditions` only spare the API server calls the webhook
 * would allow anyway, so the plan calls every webhook whose rules and `namespaceSelector` match.
 */
export function webhookSpecs(manifests: readonly Obj[]): WebhookSpec[] {
  return manifests.filter((m) => m.kind === "ValidatingWebhookConfiguration").flatMap((m) =>
    // deno-lint-ignore no-explicit-any
    (m.webhooks ?? []).map((w: any) => ({
      name: w.name,
      path: w.clientConfig?.service?.path ?? new URL(w.clientConfig?.url).pathname,
      rules: w.rules ?? [],
      failurePolicy: w.failurePolicy ?? "Fail",
      ...(w.namespaceSelector ? { namespaceSelector: w.namespaceSelector } : {}),
    }))
  );
}

/** Why the API server refuses a write: who refused it and the message it answers, as `kubectl` prints it. */
export interface Refusal {
  readonly by: string;
  readonly message: string;
  /** The field errors of an invalid object (`field: message`), one per cause, when there are several. */
  readonly causes?: readonly string[];
}

/** Who the plan applies as: a GitOps applier with platform-admin rights. */
export const PLAN_USER = { username: "butler-plan", groups: ["system:authenticated"] } as const;

const wildcard = (list: readonly string[], value: string) => list.includes("*") || list.includes(value);

/** One write to admit: what is written, over what, in which namespace, and the kind's schema (for CEL types). */
export interface AdmissionWrite {
  readonly type: ResourceType;
  readonly op: Operation;
  readonly object: Obj;
  readonly oldObject: Obj | undefined;
  /** The object's namespace as stored (its labels select webhooks; policies read it as `namespaceObject`). */
  readonly namespace: Obj | undefined;
  readonly schema?: Schema;
}

/** The first shipped policy that denies the write, in the words kubectl prints for it. */
function policyRefusal(policies: readonly AdmissionPolicy[], w: AdmissionWrite): Refusal | undefined {
  const group = groupOf(w.type.apiVersion);
  const resource = group ? `${w.type.resource}.${group}` : w.type.resource;
  const version = w.type.apiVersion.slice(group ? group.length + 1 : 0);
  const denial = firstDenial(policies, {
    operation: w.op,
    group,
    version,
    resource: w.type.resource,
    kind: w.type.kind,
    object: w.object,
    ...(w.oldObject ? { oldObject: w.oldObject } : {}),
    ...(w.namespace ? { namespaceObject: w.namespace } : {}),
    userInfo: PLAN_USER,
    ...(w.schema ? { schema: w.schema } : {}),
  });
  if (!denial) return undefined;
  const denied =
    `ValidatingAdmissionPolicy '${denial.policy}' with binding '${denial.binding}' denied request: ${denial.message}`;
  // kubectl prints an Invalid status as `The <resource> "<name>" is invalid: <field>: <message>`, and a policy's
  // cause has no field.
  return {
    by: `ValidatingAdmissionPolicy ${denial.policy}`,
    message: denial.reason === "Invalid"
      ? `The ${w.type.resource} "${w.object.metadata.name}" is invalid: : ${denied}`
      : `${resource} "${w.object.metadata.name}" is forbidden: ${denied}`,
  };
}

/**
 * Admits one write the way the API server's validating admission does: the shipped ValidatingAdmissionPolicies
 * (their CEL, evaluated in process), then every matching webhook (by its rules, and its `namespaceSelector` against
 * the labels of the object's namespace) through its real route. The review is a dry run unless `options.dryRun` is
 * false (the simulator's, whose webhooks write their quota ledger as in a cluster), so `plan` reads the quota ledger
 * but never writes it. Returns the refusal, or `undefined` when the write is admitted; the warnings the webhooks
 * answer (kubectl prints each as `Warning: ...`) are added to `options.warnings`.
 */
export async function admit(
  policies: readonly AdmissionPolicy[],
  webhooks: readonly WebhookSpec[],
  w: AdmissionWrite,
  call: HookCall,
  options: { readonly dryRun?: boolean; readonly warnings?: string[] } = {},
): Promise<Refusal | undefined> {
  const refused = policyRefusal(policies, w);
  if (refused) return refused;
  const { type, op, object, oldObject } = w;
  const namespaceLabels = w.namespace?.metadata.labels;
  const group = groupOf(type.apiVersion);
  const resource = group ? `${type.resource}.${group}` : type.resource;
  const version = type.apiVersion.slice(group ? group.length + 1 : 0);
  for (const webhook of webhooks) {
    const matches = webhook.rules.some((r) =>
      wildcard(r.apiGroups, group) && wildcard(r.operations, op) && wildcard(r.resources, type.resource)
    );
    if (!matches) continue;
    if (
      type.namespaced && webhook.namespaceSelector &&
      !matchesSelector(namespaceLabels, webhook.namespaceSelector)
    ) {
      continue;
    }
    const answer = await call(webhook.path, {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid: planUid(`${op}/${resource}/${object.metadata.namespace ?? ""}/${object.metadata.name}`),
        kind: { group, version, kind: type.kind },
        resource: { group, version, resource: type.resource },
        name: object.metadata.name,
        ...(object.metadata.namespace ? { namespace: object.metadata.namespace } : {}),
        operation: op,
        userInfo: PLAN_USER,
        object,
        oldObject: oldObject ?? null,
        dryRun: options.dryRun ?? true,
      },
    });
    if (answer.status !== 200) {
      if (webhook.failurePolicy === "Ignore") continue;
      const detail = typeof answer.body?.error === "string" ? answer.body.error : `HTTP ${answer.status}`;
      return {
        by: `webhook ${webhook.name}`,
        message: `Internal error occurred: failed calling webhook "${webhook.name}": ${detail}`,
      };
    }
    const response = answer.body.response;
    if (Array.isArray(response.warnings)) options.warnings?.push(...response.warnings.map(String));
    if (!response.allowed) {
      return {
        by: `webhook ${webhook.name}`,
        message: `admission webhook "${webhook.name}" denied the request: ${response.status?.message ?? ""}`,
      };
    }
  }
  return undefined;
}

/** The value at a field path as the API server writes it (`spec.environments[0].name`), if any. */
function valueAt(object: unknown, field: string): unknown {
  let at: unknown = object;
  for (const part of field.split(/\.|\[(\d+)\]/).filter((p) => p !== undefined && p !== "")) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** An API `Status` of an invalid object, as kubectl-validate (or the API server) answers it. */
export interface InvalidStatus {
  readonly message?: string;
  readonly details?: {
    readonly kind?: string;
    readonly name?: string;
    readonly causes?: readonly { readonly field?: string; readonly message?: string }[];
  };
}

/**
 * A schema refusal in kubectl's words: `The <Kind> "<name>" is invalid: <field>: <message>`, the causes joined
 * with `; ` when there are several, each in the words of current API servers ({@linkcode currentWords}: kubectl-validate
 * renders some as Kubernetes 1.30 does).
 *
 * @example
 * ```ts
 * invalidMessage({ details: { kind: "ProviderConfig", name: "p", causes: [{ field: "spec.aws.region", message: "Required value: region is required for AWS provider" }] } });
 * // { message: 'The ProviderConfig "p" is invalid: spec.aws.region: Required value: region is required for AWS provider' }
 * ```
 */
export function invalidMessage(status: InvalidStatus, object?: unknown): Omit<Refusal, "by"> {
  const causes = (status.details?.causes ?? []).map((c) =>
    currentWords(`${c.field ?? ""}: ${c.message ?? ""}`, object)
  );
  if (!status.details?.kind || !causes.length) return { message: status.message ?? "invalid" };
  const head = `The ${status.details.kind} "${status.details.name ?? ""}" is invalid: `;
  return causes.length === 1 ? { message: head + causes[0] } : { message: head + causes.join("; "), causes };
}

/**
 * Field errors in the words of current API servers (1.31 and later), from the renderings of kubectl-validate and
 * of Kubernetes 1.30, which print a CEL failure's value as its type (`Invalid value: "object": ...`,
 * `Invalid value: "string": ...`, `Invalid value: "": ...`), null as `"null"`, a string over its `maxLength` as
 * `Too long: may not be longer than N`, and apimachinery's metadata rules as 1.30 words them: every length as
 * `must be no more than N characters` (1.35: `bytes` for label keys and values, annotation keys and finalizers), `a
 * qualified name` (1.35: `a valid label key`), an owner reference's `kind must not be empty` (1.35: `must not be
 * empty`), the annotations' `Too long: must have at most N bytes` (1.35: `may not be more than`), a list of strings
 * in Go's syntax (`[]string{"a", "b"}`; 1.35: JSON), the scheme of a kind not registered at `scheme.go:100` (1.35:
 * `:111`). The value is read from `object` by
 * the field's path; type errors (`... in body must be of type ...`) are left as they are.
 *
 * @example
 * ```ts
 * currentWords('spec.cidr: Invalid value: "string": must be a CIDR', { spec: { cidr: "10.0.0.0/33" } });
 * // 'spec.cidr: Invalid value: "10.0.0.0/33": must be a CIDR'
 * ```
 */
export function currentWords(text: string, object?: unknown): string {
  return text.replace(
    /(^|[\s(\[])([\w.[\]<>-]+): Invalid value: "(object|array|null|string|integer|)": (?!.* in body must be of type )/gm,
    (all, before: string, field: string, type: string) => {
      if (type === "object" || type === "array") return `${before}${field}: Invalid value: `;
      if (type === "null") return `${before}${field}: Invalid value: null: `;
      const value = valueAt(object, field);
      return typeof value === "string" || typeof value === "number"
        ? `${before}${field}: Invalid value: ${JSON.stringify(value)}: `
        : all;
    },
  ).replace(/Too long: may not be longer than (\d+)$/gm, "Too long: may not be more than $1 bytes")
    .replace(
      /^(metadata\.(?:labels|annotations|finalizers): Invalid value: .*?)must be no more than (\d+) characters/gm,
      "$1must be no more than $2 bytes",
    )
    .replace(
      /(?<!")a qualified name must consist of alphanumeric/g,
      "a valid label key must consist of alphanumeric",
    )
    .replace(/Too long: must have at most (\d+) bytes/g, "Too long: may not be more than $1 bytes")
    .replace(
      /Invalid value: \[\]string\{((?:"(?:[^"\\]|\\.)*"(?:, )?)*)\}: /g,
      (_all, items: string) => `Invalid value: [${items.replaceAll('", "', '","')}]: `,
    )
    .replace(
      /^(metadata\.ownerReferences\.(?:kind|name|uid): Invalid value: ".*": )(?:kind|name|uid) must not be empty$/gm,
      "$1must not be empty",
    )
    .replace(/in scheme "pkg\/runtime\/scheme\.go:100"/g, 'in scheme "pkg/runtime/scheme.go:111"');
}
