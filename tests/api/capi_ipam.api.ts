/**
 * NetworkPools as Cluster API IPAM pools, on a real API server with Cluster API's own IPAM CRDs (from the
 * cluster-api Go module, pinned): the cluster-api-ipam component installs, claims are accepted in both served
 * versions, and what the IPAddressClaim hook writes (the claim's status, the IPAddress) is stored as written.
 */
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import assert from "node:assert/strict";
import { CAPI_IPAM_API_VERSION } from "../../lib/api/mod.ts";
import { api, installManifests, kubectl, kubectlOk, ROOT } from "./cluster.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const NS = "capi-prod";
const FIXTURES = `${ROOT}/tests/fixtures/ipaddressclaim/sync`;
const fixture = (name: string, file: "request.json" | "response.json") =>
  JSON.parse(Deno.readTextFileSync(`${FIXTURES}/${name}/${file}`)) as Obj;

Deno.test("Cluster API IPAM on a real API server", async (t) => {
  // Cluster API's IPAM CRDs come with the operator CRDs the tier installs (tools.ts pins the version).
  await installManifests();
  await kubectl(["create", "namespace", NS]);
  try {
    await t.step("the cluster-api-ipam component installs with the base (strict, server-side)", async () => {
      const dir = await Deno.makeTempDir({ dir: ROOT, prefix: ".capi-kustomize-" });
      try {
        Deno.writeTextFileSync(
          `${dir}/kustomization.yaml`,
          "resources: [../manifests]\ncomponents: [../manifests/components/cluster-api-ipam]\n",
        );
        const rendered = await kubectlOk(["kustomize", dir]);
        assert.match(rendered, /name: butler-ipaddressclaim/);
        const dc = rendered.split("\n---\n").find((d) => d.includes("name: butler-ipaddressclaim"))!;
        await kubectlOk(["apply", "--server-side", "--validate=strict", "--dry-run=server", "-f", "-"], {
          stdin: dc,
        });
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });

    await t.step("claims on a NetworkPool are accepted in v1beta2 and v1beta1", async () => {
      const claim = fixture("granted-claim-gets-ipaddress", "request.json").object;
      const body = {
        apiVersion: claim.apiVersion,
        kind: claim.kind,
        metadata: { name: claim.metadata.name },
        spec: claim.spec,
      };
      const created = await api(
        "POST",
        `/apis/${CAPI_IPAM_API_VERSION}/namespaces/${NS}/ipaddressclaims`,
        body,
      );
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const v1beta1 = {
        apiVersion: "ipam.cluster.x-k8s.io/v1beta1",
        kind: "IPAddressClaim",
        metadata: { name: "prod-md-0-abc-1" },
        spec: {
          clusterName: "prod",
          poolRef: { apiGroup: "butler.butlerlabs.dev", kind: "NetworkPool", name: "node-pool" },
        },
      };
      const old = await api(
        "POST",
        `/apis/ipam.cluster.x-k8s.io/v1beta1/namespaces/${NS}/ipaddressclaims`,
        v1beta1,
      );
      assert.equal(old.status, 201, JSON.stringify(old.body));
      const read = await api(
        "GET",
        `/apis/${CAPI_IPAM_API_VERSION}/namespaces/${NS}/ipaddressclaims/prod-md-0-abc-1`,
      );
      assert.deepEqual(read.body.spec, v1beta1.spec);
    });

    for (
      const name of [
        "granted-claim-gets-ipaddress",
        "granted-claim-ready-once-ipaddress-exists",
        "exhausted-pool",
        "pool-in-another-namespace-refused",
      ]
    ) {
      await t.step(`the claim status the hook writes is stored as written: ${name}`, async () => {
        const status = fixture(name, "response.json").status;
        const path = `/apis/${CAPI_IPAM_API_VERSION}/namespaces/${NS}/ipaddressclaims/prod-md-0-abc-0/status`;
        const current = (await api("GET", path)).body as Obj;
        const written = await api("PUT", path, { ...current, status });
        assert.equal(written.status, 200, JSON.stringify(written.body));
        assert.deepEqual((written.body as Obj).status, status);
      });
    }

    await t.step("the IPAddress the hook writes is stored as written", async () => {
      const attachments = fixture("granted-claim-gets-ipaddress", "response.json").attachments as Obj[];
      const address = attachments.find((a) => a.kind === "IPAddress")!;
      const allocation = attachments.find((a) => a.kind === "IPAllocation")!;
      assert.equal(allocation.apiVersion, API);
      const r = await api("POST", `/apis/${CAPI_IPAM_API_VERSION}/namespaces/${NS}/ipaddresses`, address);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.deepEqual((r.body as Obj).spec, address.spec);
      const allocated = await api("POST", `/apis/${API}/namespaces/${NS}/ipallocations`, allocation);
      assert.equal(allocated.status, 201, JSON.stringify(allocated.body));
    });
  } finally {
    await kubectl(["delete", "namespace", NS, "--ignore-not-found", "--wait=false"]);
  }
});
