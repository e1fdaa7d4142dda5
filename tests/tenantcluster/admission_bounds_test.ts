/**
 * Issue #46, item 3: a review the API server did not send (80,000 addons in one TenantCluster) is refused for its
 * shape, in a bounded answer, before any rule walks it; an object stored before a bound is still judged by the
 * rules when it is updated (the API server ratchets what did not change). Every refusal keeps at most
 * `REFUSAL_BOUNDS.causes` causes and a message of at most `REFUSAL_BOUNDS.message` characters.
 */
import assert from "node:assert/strict";
import { admitTenantCluster } from "../../hooks/tenantcluster/admission.ts";
import { admitTeam } from "../../hooks/team/admission.ts";
import { admissionResponse, type AdmissionReviewRequest, REFUSAL_BOUNDS } from "../../lib/contract/mod.ts";
import { isStaged } from "../../lib/http/mod.ts";
import { TENANT_CLUSTER_BOUNDS } from "../../lib/api/mod.ts";

const fixture =
  new URL("../fixtures/tenantcluster/admission/restricted-every-failure-listed", import.meta.url)
    .pathname;
const review = JSON.parse(Deno.readTextFileSync(`${fixture}/request.json`)) as AdmissionReviewRequest;
const reads = JSON.parse(Deno.readTextFileSync(`${fixture}/reads.json`));
const now = { now: new Date(Deno.readTextFileSync(`${fixture}/now`).trim()) };

/** The fixture's reads keyed as the decision names them (the fixture keys them by path). */
function decisionReads(): Record<string, unknown> {
  const byPath = reads as Record<string, unknown>;
  const team = Object.entries(byPath).find(([k]) => k.includes("/teams/"))?.[1];
  const ledger = Object.entries(byPath).find(([k]) => k.includes("/configmaps/"))?.[1];
  const clusters = Object.entries(byPath).find(([k]) => k.endsWith("/tenantclusters"))?.[1];
  return { team, ledger, clusters: clusters ?? [] };
}

function withAddons(r: AdmissionReviewRequest, n: number) {
  const copy = structuredClone(r);
  const obj = copy.request.object as { spec: Record<string, unknown> };
  obj.spec.addons = Array.from({ length: n }, (_, i) => ({ name: `addon-${i}`, values: { i } }));
  return copy;
}

function refusal(decision: ReturnType<typeof admitTenantCluster>) {
  assert.ok(!isStaged(decision));
  const response = admissionResponse("uid", decision).response;
  assert.equal(response.allowed, false);
  return response.status!;
}

Deno.test("a TenantCluster review past the CRD's bounds is refused for its shape, in bounded words", async (t) => {
  await t.step("80,000 addons: one cause naming the bound, not 80,000", () => {
    const status = refusal(admitTenantCluster(withAddons(review, 80_000), now, decisionReads()));
    assert.equal(status.code, 403);
    assert.match(status.message!, /^spec\.addons: Invalid value: Too big: expected array to have <=64 items/);
    assert.equal(status.details!.causes.length, 1);
    assert.deepEqual(status.details!.causes[0]!.reason, "schema");
  });
  await t.step("an addon name past its maxLength", () => {
    const r = structuredClone(review);
    (r.request.object as { spec: Record<string, unknown> }).spec.addons = [{ name: "x".repeat(254) }];
    const status = refusal(admitTenantCluster(r, now, decisionReads()));
    assert.match(
      status.message!,
      /spec\.addons\[0\]\.name: Invalid value: Too big: expected string to have <=253/,
    );
  });
  await t.step("at the bound, the rules judge it", () => {
    const status = refusal(
      admitTenantCluster(withAddons(review, TENANT_CLUSTER_BOUNDS.addons), now, decisionReads()),
    );
    assert.ok(status.details!.causes.every((c) => c.reason !== "schema"));
  });
  await t.step("an update of an object stored past a bound is judged by the rules (ratcheting)", () => {
    const update = withAddons(review, 100);
    update.request.operation = "UPDATE";
    update.request.oldObject = structuredClone(update.request.object);
    (update.request.oldObject as { spec: { addons: unknown[] } }).spec.addons.pop();
    const decision = admitTenantCluster(update, now, decisionReads());
    if (!isStaged(decision) && !decision.allowed) {
      assert.ok((decision.causes ?? []).every((c) => c.reason !== "schema"));
    }
  });
});

Deno.test("every refusal is bounded: causes and message", async (t) => {
  await t.step("a Team update removing 5,000 environments in use", () => {
    const names = Array.from({ length: 5000 }, (_, i) => `env-${i}`);
    const teamReview = {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid: "u",
        kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind: "Team" },
        resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource: "teams" },
        name: "payments",
        operation: "UPDATE",
        userInfo: {},
        object: { spec: { access: {}, environments: [] } },
        oldObject: { spec: { access: {}, environments: names.map((name) => ({ name })) } },
      },
    } as unknown as AdmissionReviewRequest;
    const clusters = names.map((env, i) => ({
      metadata: {
        name: `c${i}`,
        namespace: "team-payments",
        labels: { "butler.butlerlabs.dev/environment": env },
      },
    }));
    const response = admissionResponse("u", admitTeam(teamReview, undefined, { tenantClusters: clusters }))
      .response;
    assert.equal(response.allowed, false);
    assert.equal(response.status!.details!.causes.length, REFUSAL_BOUNDS.causes);
    assert.ok(response.status!.message!.length <= REFUSAL_BOUNDS.message);
    assert.match(response.status!.message!, /and 4984 more$/);
  });
  await t.step("any decision's message is cut at the bound", () => {
    const response = admissionResponse("u", {
      allowed: false,
      message: "m".repeat(100_000),
      causes: Array.from({ length: 1000 }, () => ({ reason: "r", message: "x" })),
    }).response;
    assert.equal(response.status!.message!.length, REFUSAL_BOUNDS.message);
    assert.equal(response.status!.details!.causes.length, REFUSAL_BOUNDS.causes);
  });
});
