import { CLOUD_PROVIDERS, type Provider, PROVIDERS } from "../../lib/api/mod.ts";

/** How Kubernetes renders a field error's type. */
export type FieldReason = "FieldValueRequired" | "FieldValueForbidden" | "FieldValueInvalid";

/** The spec as the rules see it: untyped JSON, as admission and CEL see it. */
// deno-lint-ignore no-explicit-any
type Spec = Record<string, any>;

/**
 * One admission rule, written once for both enforcement points: `cel` goes into the CRD's
 * `x-kubernetes-validations` at `at` (with `message`, `fieldPath`, `reason`), and `holds` is the same rule for
 * the admission webhook and the hook. A test checks the CRD carries exactly these rules.
 */
export interface Rule {
  readonly id: string;
  /** Where the CEL rule sits in the schema: `spec`, `spec.scope`, `spec.network`, ... */
  readonly at: string;
  /** Field the error names, relative to `at` (CEL `fieldPath`). */
  readonly fieldPath: string;
  readonly reason: FieldReason;
  readonly message: string;
  readonly cel: string;
  /** `self` is the object at `at` (absent objects make the rule hold, as CEL never runs on them). */
  readonly holds: (self: Spec) => boolean;
}

const nonEmpty = (v: unknown) => typeof v === "string" && v !== "";

const sectionRequired = (p: Provider): Rule => ({
  id: `${p}-section-required`,
  at: "spec",
  fieldPath: `.${p}`,
  reason: "FieldValueRequired",
  message: `${p} configuration is required when provider is "${p}"`,
  cel: `self.provider != '${p}' || has(self.${p})`,
  holds: (s) => s.provider !== p || s[p] !== undefined,
});

const fieldRequired = (p: Provider, field: string, label: string): Rule => ({
  id: `${p}-${field}-required`,
  at: "spec",
  fieldPath: `.${p}.${field}`,
  reason: "FieldValueRequired",
  message: `${field} is required for ${label} provider`,
  cel: `self.provider != '${p}' || !has(self.${p}) || (has(self.${p}.${field}) && self.${p}.${field} != '')`,
  holds: (s) => s.provider !== p || s[p] === undefined || nonEmpty(s[p][field]),
});

const https = (p: Provider): Rule => ({
  id: `${p}-endpoint-https`,
  at: "spec",
  fieldPath: `.${p}.endpoint`,
  reason: "FieldValueInvalid",
  message: "endpoint must use the https:// scheme",
  cel:
    `self.provider != '${p}' || !has(self.${p}) || !has(self.${p}.endpoint) || self.${p}.endpoint.startsWith('https://')`,
  holds: (s) =>
    s.provider !== p || s[p] === undefined || s[p].endpoint === undefined ||
    (typeof s[p].endpoint === "string" && s[p].endpoint.startsWith("https://")),
});

const vmidMinimum = (bound: "start" | "end"): Rule => ({
  id: `proxmox-vmidrange-${bound}-minimum`,
  at: "spec.proxmox.vmidRange",
  fieldPath: `.${bound}`,
  reason: "FieldValueInvalid",
  message: `vmidRange.${bound} must be at least 100`,
  cel: `!has(self.${bound}) || self.${bound} >= 100`,
  holds: (s) => s[bound] === undefined || (typeof s[bound] === "number" && s[bound] >= 100),
});

const cloudList = CLOUD_PROVIDERS.map((p) => `'${p}'`).join(", ");

/** Every ProviderConfig admission rule, in the order errors are reported. */
export const RULES: readonly Rule[] = [
  ...PROVIDERS.map(sectionRequired),
  fieldRequired("azure", "subscriptionID", "Azure"),
  fieldRequired("azure", "resourceGroup", "Azure"),
  fieldRequired("aws", "region", "AWS"),
  fieldRequired("gcp", "projectID", "GCP"),
  fieldRequired("gcp", "region", "GCP"),
  https("nutanix"),
  https("proxmox"),
  {
    id: "proxmox-nodes-required",
    at: "spec",
    fieldPath: ".proxmox.nodes",
    reason: "FieldValueRequired",
    message: "at least one node is required for Proxmox provider",
    cel:
      "self.provider != 'proxmox' || !has(self.proxmox) || (has(self.proxmox.nodes) && size(self.proxmox.nodes) > 0)",
    holds: (s) =>
      s.provider !== "proxmox" || s.proxmox === undefined ||
      (Array.isArray(s.proxmox.nodes) && s.proxmox.nodes.length > 0),
  },
  vmidMinimum("start"),
  vmidMinimum("end"),
  {
    id: "proxmox-vmidrange-order",
    at: "spec.proxmox.vmidRange",
    fieldPath: ".start",
    reason: "FieldValueInvalid",
    message: "vmidRange.start must not be greater than vmidRange.end",
    cel: "!has(self.start) || !has(self.end) || self.start <= self.end",
    holds: (s) => typeof s.start !== "number" || typeof s.end !== "number" || s.start <= s.end,
  },
  {
    id: "scope-teamref-required",
    at: "spec.scope",
    fieldPath: ".teamRef",
    reason: "FieldValueRequired",
    message: 'teamRef is required when scope type is "team"',
    cel:
      "!has(self.type) || self.type != 'team' || (has(self.teamRef) && has(self.teamRef.name) && self.teamRef.name != '')",
    holds: (s) => s.type !== "team" || nonEmpty(s.teamRef?.name),
  },
  {
    id: "ipam-poolrefs-required",
    at: "spec.network",
    fieldPath: ".poolRefs",
    reason: "FieldValueRequired",
    message: 'at least one poolRef is required when network mode is "ipam"',
    cel: "!has(self.mode) || self.mode != 'ipam' || (has(self.poolRefs) && size(self.poolRefs) > 0)",
    holds: (s) => s.mode !== "ipam" || (Array.isArray(s.poolRefs) && s.poolRefs.length > 0),
  },
  {
    id: "ipam-forbidden-for-cloud",
    at: "spec",
    fieldPath: ".network.mode",
    reason: "FieldValueForbidden",
    message: "IPAM mode is not supported for cloud providers",
    cel:
      `!(self.provider in [${cloudList}]) || !has(self.network) || !has(self.network.mode) || self.network.mode != 'ipam'`,
    holds: (s) => !CLOUD_PROVIDERS.includes(s.provider) || s.network?.mode !== "ipam",
  },
];

/** One validation error, as Kubernetes field errors render. */
export interface FieldError {
  readonly path: string;
  readonly reason: FieldReason;
  readonly message: string;
  readonly rule: string;
}

const REASON_TEXT: Record<FieldReason, string> = {
  FieldValueRequired: "Required value",
  FieldValueForbidden: "Forbidden",
  FieldValueInvalid: "Invalid value",
};

/** Renders an error as upstream's webhook does: `spec.aws.region: Required value: region is required ...`. */
export function formatFieldError(e: FieldError): string {
  return `${e.path}: ${REASON_TEXT[e.reason]}: ${e.message}`;
}

function objectAt(spec: Spec, at: string): Spec | undefined {
  let cur: unknown = { spec };
  for (const key of at.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Spec)[key];
  }
  return cur !== null && typeof cur === "object" ? cur as Spec : undefined;
}

/**
 * Validates a ProviderConfig spec with every rule the CRD also enforces in CEL. Returns every error.
 *
 * @example
 * ```ts
 * validateProviderConfig({ provider: "aws", aws: {} }).map(formatFieldError);
 * // ["spec.aws.region: Required value: region is required for AWS provider"]
 * ```
 */
export function validateProviderConfig(spec: unknown): FieldError[] {
  const s = (spec !== null && typeof spec === "object" ? spec : {}) as Spec;
  return RULES.flatMap((r) => {
    const self = objectAt(s, r.at);
    return self === undefined || r.holds(self)
      ? []
      : [{ path: `${r.at}${r.fieldPath}`, reason: r.reason, message: r.message, rule: r.id }];
  });
}
