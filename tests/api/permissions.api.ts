/**
 * The shipped command line, run: the hook Deployment's args (Deno's permissions narrowed) with its paths and
 * ports mapped onto this machine (/app → the repository, /deno-dir → the dependency cache, /etc/butler and the
 * ServiceAccount folder → temporary folders, the API server → the test control plane). Under those permissions the
 * service answers hooks and an admission review that reads the API; a file outside the allowed paths cannot be
 * read, and an API server it was not given cannot be reached.
 */
import assert from "node:assert/strict";
import { cluster, freePort, installManifests } from "./cluster.ts";
import { post, ready, readyz, shippedServiceDir, startShipped } from "./shipped.ts";

/** A ProviderConfig delete: the webhook lists the TenantClusters that use it, a read of the API. */
const providerDelete = {
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid: "permissions-1",
    kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind: "ProviderConfig" },
    resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource: "providerconfigs" },
    name: "unused",
    namespace: "butler-system",
    operation: "DELETE",
    userInfo: { username: "admin" },
    object: null,
    oldObject: {
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "ProviderConfig",
      metadata: { name: "unused", namespace: "butler-system" },
      spec: { provider: "harvester", credentialsRef: { name: "c" } },
    },
  },
};

Deno.test("the shipped command line: narrowed permissions that are enough, and hold", async (t) => {
  await installManifests();
  const { dir, kubeconfig } = await shippedServiceDir();
  const api = new URL(cluster().server).host;
  const unlisted = `127.0.0.1:${freePort()}`;
  Deno.writeTextFileSync(`${dir}/serviceaccount/other-api.kubeconfig`, kubeconfig(`https://${unlisted}`));

  const service = await startShipped(dir, api);
  try {
    await t.step(
      "it starts, and answers a hook call (in its worker) and a review that reads the API",
      async () => {
        assert.ok(await ready(service), service.log());
        const hook = await post(`${service.hooks}/hooks/team/customize`, {
          controller: {},
          parent: { apiVersion: "butler.butlerlabs.dev/v1alpha1", kind: "Team", metadata: { name: "t" } },
        }, "metacontroller");
        assert.equal(hook.status, 200, JSON.stringify(hook.body));
        assert.ok(Array.isArray(hook.body.relatedResources));
        const review = await post(`${service.webhooks}/webhooks/validate/providerconfig`, providerDelete);
        assert.equal(review.status, 200, service.log());
        assert.equal(review.body.response.allowed, true, JSON.stringify(review.body));
        assert.doesNotMatch(service.log(), /NotCapable|Requires \w+ access/);
      },
    );
  } finally {
    await service.stop();
  }

  await t.step("a file outside the allowed paths cannot be read: the service does not start", async () => {
    const outside = await startShipped(dir, api, { TLS_CERT_FILE: `${dir}/outside/tls.crt` });
    const status = await outside.child.status;
    assert.notEqual(status.code, 0);
    assert.match(outside.log(), new RegExp(`Requires read access to \\\\?"${dir}/outside/tls.crt`));
  });

  await t.step(
    "an API server it was not given is not reached: the service says it cannot decide, the review fails, the log says why",
    async () => {
      const other = await startShipped(dir, api, {
        KUBECONFIG: `${dir}/serviceaccount/other-api.kubeconfig`,
      });
      try {
        // Issue #55: a replica whose admission cache cannot list is not ready, so the API server's reviews go
        // elsewhere; it still answers what it is sent.
        assert.equal(await ready(other), false, "ready though its admission cache cannot list");
        assert.match(await readyz(other), /the admission cache of \w+ has not been listed yet/);
        const review = await post(`${other.webhooks}/webhooks/validate/providerconfig`, providerDelete);
        assert.notEqual(review.body.response?.allowed, true, JSON.stringify(review.body));
        assert.match(other.log(), new RegExp(`Requires net access to \\\\?"${unlisted}`));
      } finally {
        await other.stop();
      }
    },
  );
  await Deno.remove(dir, { recursive: true });
});
