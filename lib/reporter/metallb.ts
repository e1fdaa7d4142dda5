/**
 * What the reporter says about the MetalLB configuration it applies to a tenant: a condition `MetalLBApplied`
 * on the LoadBalancerInventory, from a fixed set of classified outcomes. Nothing the tenant answers is echoed (a
 * tenant controls its API server, and status is readable by the team): only the HTTP status code.
 *
 * @module
 */
import type { ConditionInput } from "../conditions/mod.ts";
import { listNames } from "../conditions/mod.ts";
import { KubeApiError } from "../kube/mod.ts";
import { classifyTenantError, type TenantFailure } from "./classify.ts";

/** Why an apply failed, as a condition reason. */
export type MetalLBFailure = "MetalLBNotInstalled" | "Rejected" | TenantFailure;

/** The last outcome of applying a tenant's MetalLB configuration. */
export type MetalLBOutcome =
  | { readonly state: "Applied"; readonly addresses: readonly string[] }
  | { readonly state: "NoAddresses" }
  | { readonly state: "NotConnected" }
  | { readonly state: "Failed"; readonly reason: MetalLBFailure; readonly message: string };

const NOT_INSTALLED =
  "the tenant serves no metallb.io/v1beta1 IPAddressPool or L2Advertisement API: install MetalLB in the tenant";
const FORBIDDEN =
  "the kubeconfig's identity may not apply IPAddressPools and L2Advertisements in metallb-system (grant get, create and patch)";

/**
 * Classifies a failed apply: the HTTP status decides, the tenant's words never reach status.
 *
 * @example
 * ```ts
 * metallbFailure(new KubeApiError(404, "NotFound", "the server could not find the requested resource", "/apis/..."));
 * // { state: "Failed", reason: "MetalLBNotInstalled", message: "... (HTTP 404)" }
 * ```
 */
export function metallbFailure(err: unknown): MetalLBOutcome {
  if (err instanceof KubeApiError && err.status === 404) {
    return { state: "Failed", reason: "MetalLBNotInstalled", message: `${NOT_INSTALLED} (HTTP 404)` };
  }
  if (err instanceof KubeApiError && (err.status === 400 || err.status === 422)) {
    return {
      state: "Failed",
      reason: "Rejected",
      message: `the tenant's API server rejected the MetalLB objects (HTTP ${err.status})`,
    };
  }
  const c = classifyTenantError(err, FORBIDDEN);
  return { state: "Failed", reason: c.reason, message: c.message };
}

/**
 * The `MetalLBApplied` condition of an outcome.
 *
 * @example
 * ```ts
 * metallbCondition({ state: "Applied", addresses: ["10.40.2.0-10.40.2.1"] }).status; // "True"
 * ```
 */
export function metallbCondition(outcome: MetalLBOutcome): ConditionInput {
  switch (outcome.state) {
    case "Applied":
      return {
        type: "MetalLBApplied",
        status: "True",
        reason: "Applied",
        message: `IPAddressPool metallb-system/default-pool holds ${outcome.addresses.length} range(s): ${
          listNames(outcome.addresses, 8)
        }; re-applied periodically, so manual edits are reverted`,
      };
    case "NoAddresses":
      return {
        type: "MetalLBApplied",
        status: "Unknown",
        reason: "NoAddresses",
        message: "the TenantCluster has no Allocated load-balancer addresses yet: nothing to apply",
      };
    case "NotConnected":
      return {
        type: "MetalLBApplied",
        status: "Unknown",
        reason: "NotConnected",
        message: "not applied: the tenant cannot be reached with its kubeconfig (see Reporting)",
      };
    case "Failed":
      return { type: "MetalLBApplied", status: "False", reason: outcome.reason, message: outcome.message };
  }
}
