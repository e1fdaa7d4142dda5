/**
 * Issue #46: every list, string and map a user writes into a Butler object has a bound in its CRD, and the bounds
 * the hooks and admission enforce (`TEAM_BOUNDS`, `TENANT_CLUSTER_BOUNDS`, the zod schemas of `lib/api`) are the
 * CRD's own, so that what a forged review or an object stored before a bound carries is refused in the same words
 * the API server would use. The API server tier installs these CRDs (their CEL cost budgets depend on the bounds).
 */
import assert from "node:assert/strict";
import type { z } from "zod";
import { loadKustomization } from "../lib/testing/mod.ts";

// deno-lint-ignore no-explicit-any
type Schema = Record<string, any>;
import {
  ProviderConfigSpec,
  TEAM_BOUNDS,
  TeamSpec,
  TENANT_CLUSTER_BOUNDS,
  TenantClusterSpec,
} from "../lib/api/mod.ts";

/**
 * Fields whose content no schema can bound, each with why that is safe: they are kept as written and never
 * walked by a hook beyond copying, and the API server's request limit (3 MiB) bounds them.
 */
const UNBOUNDED: Record<string, string> = {
  "Team.spec.namespaceQuota.resourceQuotas[].spec":
    "a ResourceQuotaSpec, copied into the child; platform admins only",
  "Team.spec.namespaceQuota.limitRanges[].spec":
    "a LimitRangeSpec, copied into the child; platform admins only",
  "TenantCluster.spec.addons[].values": "an addon's values, handed to the provider as written; never read",
};

/** Every unbounded list, string or map under a schema node, as `path: what is missing`. */
export function unboundedFields(node: Schema, path: string): string[] {
  if (UNBOUNDED[path] !== undefined) return [];
  const problems: string[] = [];
  if (node["x-kubernetes-preserve-unknown-fields"] && !node.properties) {
    problems.push(`${path}: keeps unknown fields with no bound`);
  }
  const types: unknown[] = node.anyOf ? node.anyOf.map((s: Schema) => s.type) : [node.type];
  if (types.includes("string") && node.maxLength === undefined && !node.enum && node.format !== "date-time") {
    problems.push(`${path}: string without maxLength`);
  }
  if (node.type === "array") {
    if (node.maxItems === undefined) problems.push(`${path}: array without maxItems`);
    problems.push(...unboundedFields(node.items ?? {}, `${path}[]`));
  }
  if (typeof node.additionalProperties === "object" && node.maxProperties === undefined) {
    problems.push(`${path}: map without maxProperties`);
  }
  for (const [k, sub] of Object.entries(node.properties ?? {})) {
    problems.push(...unboundedFields(sub as Schema, `${path}.${k}`));
  }
  return problems;
}

/** The schema node at a path of property names (`[]` steps into a list's items). */
function nodeAt(root: Schema, path: string): Schema {
  return path.split(".").reduce((node, step) => {
    const [name, ...items] = step.split("[]");
    let out = name ? node.properties?.[name] : node;
    for (const _ of items) out = out?.items;
    assert.ok(out, `no schema at ${path} (${step})`);
    return out;
  }, root as Schema);
}

const crds = loadKustomization(new URL("../manifests", import.meta.url).pathname)
  .filter((o) => o.kind === "CustomResourceDefinition");
const schemaOf = (kind: string): Schema => {
  const crd = crds.find((c) => c.spec.names.kind === kind);
  assert.ok(crd, kind);
  return crd.spec.versions[0].schema.openAPIV3Schema;
};

/** The zod issue of a value at a path, or undefined when it parses. */
function refusal(schema: z.ZodType, value: unknown): string | undefined {
  const parsed = schema.safeParse(value);
  return parsed.success
    ? undefined
    : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
}

Deno.test("every spec list, string and map a user writes is bounded in its CRD", async (t) => {
  await t.step("the check finds what has no bound", () => {
    assert.deepEqual(
      unboundedFields({
        type: "object",
        properties: {
          a: { type: "string" },
          b: { type: "array", items: { type: "string", maxLength: 3 } },
          c: { type: "object", additionalProperties: { type: "string", maxLength: 1 } },
          d: { type: "string", enum: ["x"] },
          e: { anyOf: [{ type: "integer" }, { type: "string" }], maxLength: 64 },
        },
      }, "X.spec"),
      [
        "X.spec.a: string without maxLength",
        "X.spec.b: array without maxItems",
        "X.spec.c: map without maxProperties",
      ],
    );
  });
  assert.equal(crds.length, 6);
  for (const crd of crds) {
    await t.step(crd.spec.names.kind, () => {
      const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
      assert.deepEqual(unboundedFields(spec, `${crd.spec.names.kind}.spec`), []);
    });
  }
  await t.step("every exemption names a field that exists", () => {
    for (const path of Object.keys(UNBOUNDED)) {
      const [kind, ...rest] = path.split(".");
      nodeAt(schemaOf(kind!), rest.join("."));
    }
  });
});

/** Each mirrored bound: its CRD path, its constant, and a value of that many entries for the zod schema. */
const MIRRORED: { path: string; max: number; schema: z.ZodType; at: (n: number) => unknown }[] = [
  {
    path: "Team.spec.access.users",
    max: TEAM_BOUNDS.users,
    schema: TeamSpec,
    at: (n) => ({ access: { users: users(n) } }),
  },
  {
    path: "Team.spec.access.groups",
    max: TEAM_BOUNDS.groups,
    schema: TeamSpec,
    at: (n) => ({ access: { groups: users(n) } }),
  },
  {
    path: "Team.spec.environments",
    max: TEAM_BOUNDS.environments,
    schema: TeamSpec,
    at: (n) => ({ access: {}, environments: Array.from({ length: n }, (_, i) => ({ name: `e${i}` })) }),
  },
  {
    path: "Team.spec.environments[].access.users",
    max: TEAM_BOUNDS.environmentUsers,
    schema: TeamSpec,
    at: (n) => ({ access: {}, environments: [{ name: "e", access: { users: users(n) } }] }),
  },
  {
    path: "Team.spec.environments[].access.groups",
    max: TEAM_BOUNDS.environmentGroups,
    schema: TeamSpec,
    at: (n) => ({ access: {}, environments: [{ name: "e", access: { groups: users(n) } }] }),
  },
  {
    path: "Team.spec.resourceLimits.allowedKubernetesVersions",
    max: TEAM_BOUNDS.kubernetesVersions,
    schema: TeamSpec,
    at: (n) => ({ access: {}, resourceLimits: { allowedKubernetesVersions: names(n) } }),
  },
  {
    path: "Team.spec.resourceLimits.allowedProviders",
    max: TEAM_BOUNDS.providers,
    schema: TeamSpec,
    at: (n) => ({ access: {}, resourceLimits: { allowedProviders: names(n) } }),
  },
  {
    path: "Team.spec.resourceLimits.allowedAddons",
    max: TEAM_BOUNDS.addons,
    schema: TeamSpec,
    at: (n) => ({ access: {}, resourceLimits: { allowedAddons: names(n) } }),
  },
  {
    path: "Team.spec.resourceLimits.deniedAddons",
    max: TEAM_BOUNDS.addons,
    schema: TeamSpec,
    at: (n) => ({ access: {}, resourceLimits: { deniedAddons: names(n) } }),
  },
  {
    path: "Team.spec.clusterDefaults.defaultAddons",
    max: TEAM_BOUNDS.addons,
    schema: TeamSpec,
    at: (n) => ({ access: {}, clusterDefaults: { defaultAddons: names(n) } }),
  },
  {
    path: "Team.spec.namespaceQuota.resourceQuotas",
    max: TEAM_BOUNDS.namespaceQuotas,
    schema: TeamSpec,
    at: (n) => ({
      access: {},
      namespaceQuota: { resourceQuotas: Array.from({ length: n }, (_, i) => ({ name: `q${i}`, spec: {} })) },
    }),
  },
  {
    path: "Team.spec.namespaceQuota.limitRanges",
    max: TEAM_BOUNDS.namespaceQuotas,
    schema: TeamSpec,
    at: (n) => ({
      access: {},
      namespaceQuota: { limitRanges: Array.from({ length: n }, (_, i) => ({ name: `l${i}`, spec: {} })) },
    }),
  },
  {
    path: "TenantCluster.spec.addons",
    max: TENANT_CLUSTER_BOUNDS.addons,
    schema: TenantClusterSpec,
    at: (n) => ({ addons: Array.from({ length: n }, (_, i) => ({ name: `addon-${i}` })) }),
  },
];

function users(n: number) {
  return Array.from({ length: n }, (_, i) => ({ name: `user${i}@example.com` }));
}
function names(n: number) {
  return Array.from({ length: n }, (_, i) => `1.${i}.0`);
}

Deno.test("the hooks' bounds are the CRD's: at the bound accepted, one past it refused", async (t) => {
  for (const m of MIRRORED) {
    await t.step(m.path, () => {
      const [kind, ...rest] = m.path.split(".");
      assert.equal(nodeAt(schemaOf(kind!), rest.join(".")).maxItems, m.max, "the CRD's maxItems");
      assert.equal(refusal(m.schema, m.at(m.max)), undefined, "at the bound");
      assert.match(refusal(m.schema, m.at(m.max + 1)) ?? "", new RegExp(`<=${m.max} items`), "one past it");
    });
  }
  await t.step("string bounds the hooks read", () => {
    const long = (n: number) => "x".repeat(n);
    const userName = nodeAt(schemaOf("Team"), "spec.access.users[].name").maxLength;
    assert.equal(userName, TEAM_BOUNDS.subjectName);
    assert.equal(refusal(TeamSpec, { access: { users: [{ name: long(userName) }] } }), undefined);
    assert.match(refusal(TeamSpec, { access: { users: [{ name: long(userName + 1) }] } }) ?? "", /<=256/);
    const addon = nodeAt(schemaOf("TenantCluster"), "spec.addons[].name").maxLength;
    assert.match(refusal(TenantClusterSpec, { addons: [{ name: long(addon + 1) }] }) ?? "", /<=253/);
    const credentials = nodeAt(schemaOf("ProviderConfig"), "spec.credentialsRef.name").maxLength;
    assert.match(
      refusal(ProviderConfigSpec, { provider: "aws", credentialsRef: { name: long(credentials + 1) } }) ?? "",
      /<=253/,
    );
  });
});
