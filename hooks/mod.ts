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

/** The registrars of all implemented hooks, in the order their routes are added. */
export const HOOK_ROUTES: readonly RouteRegistrar[] = [
  registerNetworkPoolRoutes,
  registerIPAllocationRoutes,
  registerProviderConfigRoutes,
  registerTeamRoutes,
  registerTenantClusterRoutes,
  registerIPAddressClaimRoutes,
];
