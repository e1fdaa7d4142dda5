import { z } from "zod";
import { readLimit } from "../quantity/mod.ts";

/** Team roles, lowest first. */
export const ROLES = ["viewer", "operator", "admin"] as const;
/** A team role. */
export type Role = (typeof ROLES)[number];

/**
 * What a Team may hold (issue #46): the CRD's `maxItems` and `maxLength`, mirrored here so that admission and the
 * hooks refuse what the API server would (`tests/crd_bounds_test.ts` holds the two together). Chosen from real
 * needs, so that a Team at every bound still syncs in a few milliseconds (`bench/team_bounds_bench.ts`):
 * direct users for a large team (bigger organisations grant through groups), a group per identity-provider group
 * a team maps, environments for every stage in several regions, and in each the few subjects it raises.
 */
export const TEAM_BOUNDS = {
  /** `spec.access.users`. */
  users: 64,
  /** `spec.access.groups`. */
  groups: 16,
  /** `spec.environments`. */
  environments: 8,
  /** `spec.environments[].access.users`: the few an environment raises above their team role. */
  environmentUsers: 8,
  /** `spec.environments[].access.groups`. */
  environmentGroups: 4,
  /** User and group names: an email (at most 254 characters) or an OIDC `sub` (at most 255). */
  subjectName: 256,
  /** `allowedKubernetesVersions`. */
  kubernetesVersions: 64,
  /** `allowedProviders`. */
  providers: 32,
  /** `allowedAddons`, `deniedAddons` and `defaultAddons`. */
  addons: 128,
  /** `namespaceQuota.resourceQuotas` and `namespaceQuota.limitRanges`. */
  namespaceQuotas: 16,
} as const;

const Quantity = z.union([z.string().max(64), z.number()]);
const Count = z.number().int().min(0);

const Subject = z.string().min(1).max(TEAM_BOUNDS.subjectName);
const Name = z.string().max(253);

/** A `TeamAccess` whose lists hold at most `users` and `groups` entries. */
function accessSchema(users: number, groups: number) {
  return z.looseObject({
    users: z.array(z.looseObject({ name: Subject, role: z.enum(ROLES).optional() })).max(users).optional(),
    groups: z.array(z.looseObject({
      name: Subject,
      role: z.enum(ROLES).optional(),
      identityProvider: z.string().max(253).optional(),
    })).max(groups).optional(),
  });
}

/** `TeamAccess`: users and groups, each with a role (default viewer). */
export const TeamAccess = accessSchema(TEAM_BOUNDS.users, TEAM_BOUNDS.groups);
/** Team access. */
export type TeamAccess = z.infer<typeof TeamAccess>;

/** An environment's `access`: the team members it raises. */
export const EnvironmentAccess = accessSchema(TEAM_BOUNDS.environmentUsers, TEAM_BOUNDS.environmentGroups);

/** A Kubernetes version as the CRD bounds it (the patterns are checked where the value is used). */
const Version = z.string().max(32);

/** `ClusterDefaults`. */
export const ClusterDefaultsSchema = z.looseObject({
  kubernetesVersion: Version.optional(),
  workerCount: z.number().int().min(1).optional(),
  workerCPU: Quantity.optional(),
  workerMemoryGi: z.number().int().min(1).optional(),
  workerDiskGi: z.number().int().min(1).optional(),
  defaultAddons: z.array(Name).max(TEAM_BOUNDS.addons).optional(),
});

/** `TeamResourceLimits`. */
export const ResourceLimits = z.looseObject({
  maxClusters: Count.optional(),
  maxNodesPerCluster: Count.optional(),
  maxTotalNodes: Count.optional(),
  maxCPUCores: Quantity.optional(),
  maxMemory: Quantity.optional(),
  maxStorage: Quantity.optional(),
  defaultNodeCount: z.number().int().min(1).optional(),
  defaultCPUPerNode: Quantity.optional(),
  defaultMemoryPerNode: Quantity.optional(),
  allowedKubernetesVersions: z.array(Version).max(TEAM_BOUNDS.kubernetesVersions).optional(),
  allowedProviders: z.array(Name).max(TEAM_BOUNDS.providers).optional(),
  allowedAddons: z.array(Name).max(TEAM_BOUNDS.addons).optional(),
  deniedAddons: z.array(Name).max(TEAM_BOUNDS.addons).optional(),
});
/** Team resource limits. */
export type ResourceLimits = z.infer<typeof ResourceLimits>;

/** Environment names are label values: alphanumeric anchors, `-_.` inside, at most 63 characters. */
export const ENVIRONMENT_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** `EnvironmentSpec`. */
export const EnvironmentSpec = z.looseObject({
  name: z.string().min(1).max(63).regex(ENVIRONMENT_NAME),
  description: z.string().max(4096).optional(),
  limits: z.looseObject({ maxClusters: Count.optional(), maxClustersPerMember: Count.optional() }).optional(),
  access: EnvironmentAccess.optional(),
  clusterDefaults: ClusterDefaultsSchema.optional(),
});
/** An environment. */
export type EnvironmentSpec = z.infer<typeof EnvironmentSpec>;

const ObjectName = z.string().min(1).max(63).regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);

/** Capsule-style quotas placed in the team namespace: named ResourceQuota and LimitRange specs. */
export const NamespaceQuota = z.looseObject({
  resourceQuotas: z.array(z.looseObject({ name: ObjectName, spec: z.record(z.string(), z.unknown()) }))
    .max(TEAM_BOUNDS.namespaceQuotas).optional(),
  limitRanges: z.array(z.looseObject({ name: ObjectName, spec: z.record(z.string(), z.unknown()) }))
    .max(TEAM_BOUNDS.namespaceQuotas).optional(),
});

/** `Team.spec`. */
export const TeamSpec = z.looseObject({
  displayName: z.string().max(256).optional(),
  description: z.string().max(4096).optional(),
  access: TeamAccess,
  resourceLimits: ResourceLimits.optional(),
  providerConfigRef: z.looseObject({ name: z.string().min(1).max(253) }).optional(),
  clusterDefaults: ClusterDefaultsSchema.optional(),
  environments: z.array(EnvironmentSpec).max(TEAM_BOUNDS.environments).optional(),
  namespaceQuota: NamespaceQuota.optional(),
});
/** A Team's spec. */
export type TeamSpec = z.infer<typeof TeamSpec>;

/** The TenantCluster fields the Team reads. */
export const ObservedCluster = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string().optional(),
    deletionTimestamp: z.string().nullable().optional(),
    labels: z.record(z.string(), z.string()).nullable().optional(),
    annotations: z.record(z.string(), z.string()).nullable().optional(),
  }),
  spec: z.looseObject({
    kubernetesVersion: z.string().optional(),
    workers: z.looseObject({
      replicas: z.number().int().optional(),
      machineTemplate: z.looseObject({
        cpu: Quantity.optional(),
        memory: Quantity.optional(),
        diskSize: Quantity.optional(),
      }).optional(),
    }).optional(),
    addons: z.array(z.looseObject({ name: z.string() })).optional(),
  }).optional(),
  /** `status.effective` holds the shape the cluster was given: unset fields keep it. */
  status: z.unknown().optional(),
});
/** A TenantCluster as the Team sees it. */
export type ObservedCluster = z.infer<typeof ObservedCluster>;

/** The namespace of a team. */
export function teamNamespace(team: string): string {
  return `team-${team}`;
}

/** The Team limits and per-cluster defaults that are quantities, by field path. */
const QUANTITY_FIELDS = [
  "maxCPUCores",
  "maxMemory",
  "maxStorage",
  "defaultCPUPerNode",
  "defaultMemoryPerNode",
] as const;

/**
 * The Team's quantities that do not read (stored before the CRD refused them): each a field path and why. A limit
 * that cannot be read is never taken as "no limit": admission refuses what it would check and the Team reports
 * it (`Ready=False`, reason `InvalidLimits`).
 *
 * @example
 * ```ts
 * limitProblems({ access: {}, resourceLimits: { maxMemory: "480GB" } });
 * // ["spec.resourceLimits.maxMemory: invalid quantity \"480GB\""]
 * ```
 */
export function limitProblems(spec: TeamSpec): string[] {
  const limits = spec.resourceLimits ?? {};
  return QUANTITY_FIELDS.flatMap((field) => {
    const l = readLimit(limits[field]);
    return l.ok ? [] : [`spec.resourceLimits.${field}: ${l.message}`];
  });
}

/** How many claims a Team's status names at most (`status.admission.admitted` or `held`). */
export const WAITING_BOUND = 128;

/**
 * A claim judged: the cluster's name and UID, the version of its quota record that holds the claim, and (held)
 * the limit it passes.
 */
const WaitingCluster = z.object({
  name: z.string(),
  uid: z.string(),
  claim: z.string().optional(),
  message: z.string().optional(),
});

/**
 * `status.admission` of a Team: the claims of its TenantClusters (to start, or to grow, move or change owner once
 * started), each admitted when it fits within the team's limits with what is admitted and the claims made before
 * it, else held with why. A cluster applies a claim only once its Team has admitted that version of its quota
 * record (hooks/tenantcluster/holds.ts). Unreadable: nothing admitted.
 */
export const TeamAdmission = z.object({
  admitted: z.array(WaitingCluster).optional(),
  held: z.array(WaitingCluster).optional(),
  message: z.string().optional(),
}).catch({});

/** A Team's `status.admission`. */
export type TeamAdmission = z.infer<typeof TeamAdmission>;
