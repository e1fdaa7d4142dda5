/**
 * Every hook module's route registrar. A route exists only once its hook is implemented.
 *
 * @module
 */
import type { RouteRegistrar } from "../lib/http/mod.ts";
import { registerIPAddressClaimRoutes } from "./ipaddressclaim/mod.ts";
import { registerIPAllocationRoutes } from "./ipallocation/mod.ts";
import { registerNetworkPoolRoutes } from "./networkpool/mod.ts";
import { registerProviderConfigRoutes } from "./providerconfig/mod.ts";
import { registerTeamRoutes } from "./team/mod.ts";
import { registerTenantClusterRoutes } from "./tenantcluster/mod.ts";
import type { PolicyTwin } from "../lib/plan/mod.ts";
import { TEAM_ACCESS_POLICY } from "./team/policy.ts";
import { TENANTCLUSTER_IDENTITY_POLICY, TENANTCLUSTER_REFERENCES_POLICY } from "./tenantcluster/policy.ts";
import { PROVIDERCONFIG_REFERENCES_POLICY } from "./providerconfig/policy.ts";

/** The registrars of all implemented hooks, in the order their routes are added. */
export const HOOK_ROUTES: readonly RouteRegistrar[] = [
  registerNetworkPoolRoutes,
  registerIPAllocationRoutes,
  registerProviderConfigRoutes,
  registerTeamRoutes,
  registerTenantClusterRoutes,
  registerIPAddressClaimRoutes,
];

/** The identity-free ValidatingAdmissionPolicies as TypeScript twins, for `plan`. */
export const ADMISSION_POLICIES: readonly PolicyTwin[] = [
  TEAM_ACCESS_POLICY,
  TENANTCLUSTER_IDENTITY_POLICY,
  TENANTCLUSTER_REFERENCES_POLICY,
  PROVIDERCONFIG_REFERENCES_POLICY,
];
