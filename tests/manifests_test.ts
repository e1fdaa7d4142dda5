import assert from "node:assert/strict";
import { kubectlKustomize, loadKustomization, type Manifest, manifestId } from "../lib/testing/mod.ts";

const DIR = new URL("../manifests", import.meta.url).pathname;
const objects = loadKustomization(DIR);
const find = (kind: string, name: string) => {
  const m = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(m, `${kind} ${name} is in manifests/`);
  return m as Manifest;
};

Deno.test("manifests build", async (t) => {
  const kubectl = kubectlKustomize(DIR);
  await t.step(
    kubectl ? "kubectl kustomize renders the same objects as the loader" : "loader renders (kubectl absent)",
    () => {
      assert.ok(objects.length > 0);
      if (kubectl) {
        assert.ok(kubectl.ok, kubectl.stderr);
        assert.deepEqual(kubectl.objects.map(manifestId).sort(), objects.map(manifestId).sort());
      }
      const ids = objects.map(manifestId);
      assert.equal(new Set(ids).size, ids.length, "no object appears twice");
    },
  );
  await t.step("every namespaced object of ours lives in butler-system", () => {
    for (const o of objects) {
      const clusterScoped = [
        "Namespace",
        "CustomResourceDefinition",
        "ClusterRole",
        "ClusterRoleBinding",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "ValidatingWebhookConfiguration",
      ];
      if (clusterScoped.includes(o.kind)) {
        continue;
      }
      if (o.apiVersion.startsWith("metacontroller.k8s.io/")) continue;
      assert.equal(o.metadata.namespace, "butler-system", manifestId(o));
    }
  });
});

Deno.test("hook service deployment", async (t) => {
  const deploy = find("Deployment", "butler-hooks");
  const pod = deploy.spec.template.spec;
  const container = pod.containers[0];
  await t.step("two replicas, non-root, read-only root filesystem, no privilege", () => {
    assert.equal(deploy.spec.replicas, 2);
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.ok(pod.securityContext.runAsUser > 0);
    assert.equal(container.securityContext.readOnlyRootFilesystem, true);
    assert.equal(container.securityContext.allowPrivilegeEscalation, false);
    assert.deepEqual(container.securityContext.capabilities.drop, ["ALL"]);
  });
  await t.step("resource requests and limits", () => {
    for (const k of ["requests", "limits"]) {
      assert.ok(container.resources[k].cpu, `${k}.cpu`);
      assert.ok(container.resources[k].memory, `${k}.memory`);
    }
  });
  await t.step("probes on /readyz and /healthz, over HTTPS", () => {
    assert.equal(container.readinessProbe.httpGet.path, "/readyz");
    assert.equal(container.livenessProbe.httpGet.path, "/healthz");
    assert.equal(container.readinessProbe.httpGet.scheme, "HTTPS");
    assert.equal(container.livenessProbe.httpGet.scheme, "HTTPS");
  });
  await t.step(
    "TLS and client certificates from the cert-manager Secret the serving Certificate writes",
    () => {
      const env = Object.fromEntries(container.env.map((e: Manifest) => [e.name, e.value]));
      const serving = find("Certificate", "butler-hooks-serving");
      const volume = deploy.spec.template.spec.volumes.find((v: Manifest) => v.secret);
      assert.equal(volume.secret.secretName, serving.spec.secretName);
      const mount = container.volumeMounts.find((m: Manifest) => m.name === volume.name).mountPath;
      assert.deepEqual(
        [env.TLS_CERT_FILE, env.TLS_KEY_FILE, env.TLS_CLIENT_CA_FILE],
        [`${mount}/tls.crt`, `${mount}/tls.key`, `${mount}/ca.crt`],
      );
      const svc = find("Service", "butler-hooks");
      assert.ok(serving.spec.dnsNames.includes(`${svc.metadata.name}.${svc.metadata.namespace}.svc`));
      assert.deepEqual(
        serving.spec.issuerRef,
        find("Certificate", "butler-metacontroller-client").spec.issuerRef,
      );
    },
  );
  await t.step("never enables the clock override", () => {
    for (const o of objects) {
      assert.doesNotMatch(JSON.stringify(o), /CLOCK_OVERRIDE|TEST_SHRINK_GRACE_SECONDS/);
    }
  });
  await t.step("the Service reaches the container port, over HTTPS", () => {
    const svc = find("Service", "butler-hooks");
    assert.deepEqual(svc.spec.selector, deploy.spec.selector.matchLabels);
    assert.equal(svc.spec.ports[0].port, 443);
    assert.equal(svc.spec.ports[0].targetPort, container.ports[0].name);
    assert.equal(
      container.ports[0].containerPort,
      Number(container.env.find((e: Manifest) => e.name === "PORT").value),
    );
  });
});

Deno.test("Metacontroller controllers call routes the service serves", async (t) => {
  const { HOOK_ROUTES } = await import("../hooks/mod.ts");
  const { createTestApp } = await import("../lib/testing/mod.ts");
  const { routes } = createTestApp(HOOK_ROUTES);
  // The base's controllers, and the cluster-api-ipam component's (its routes are served whether or not it is on).
  const controllers = [
    ...objects,
    ...loadKustomization(`${DIR}/components/cluster-api-ipam`),
  ].filter((o) => o.apiVersion === "metacontroller.k8s.io/v1alpha1");
  const service = find("Service", "butler-hooks");
  const host = `${service.metadata.name}.${service.metadata.namespace}.svc`;
  const base = `https://${host}`;
  const client = find("Certificate", "butler-metacontroller-client");
  const serving = find("Certificate", "butler-hooks-serving");
  assert.ok(controllers.length >= 2);
  for (const c of controllers) {
    await t.step(`${c.kind} ${c.metadata.name}`, () => {
      // Every hook call goes over TLS to the Service, verified with the serving CA, with the client certificate.
      assert.deepEqual(c.spec.endpointConfigs, [{
        host,
        caBundle: { secretRef: { name: serving.spec.secretName, namespace: "butler-system", key: "ca.crt" } },
        clientTLS: { secretRef: { name: client.spec.secretName, namespace: client.metadata.namespace } },
      }]);
      const hooks = Object.entries(c.spec.hooks as Record<string, Manifest>);
      assert.ok(hooks.length > 0);
      for (const [name, hook] of hooks) {
        assert.equal(hook.version, "v2", `${name} uses hook version v2`);
        const url: string = hook.webhook.url;
        assert.ok(url.startsWith(base + "/"), `${url} goes to the hook Service`);
        assert.ok(routes.includes(`POST ${url.slice(base.length)}`), `${url} is served`);
      }
      if (c.kind === "CompositeController") assert.equal(c.spec.generateSelector, true);
    });
  }
  await t.step("decorators manage their kind in every namespace (no selector narrows them)", () => {
    // A decision (docs/ipam.md#networkpool-np-namespaced-usually-in-butler-system): pools are platform objects by RBAC; a selector would leave some of our
    // own objects unmanaged, with no status and no finalizer.
    for (const c of controllers.filter((c) => c.kind === "DecoratorController")) {
      for (const r of c.spec.resources as Manifest[]) {
        assert.deepEqual(
          Object.keys(r).sort(),
          ["apiVersion", "resource"],
          `${c.metadata.name}: ${JSON.stringify(r)}`,
        );
      }
    }
  });
  await t.step("every served hook route is called by some controller", () => {
    const called = new Set(
      controllers.flatMap((c) =>
        Object.values(c.spec.hooks as Record<string, Manifest>).map((h) =>
          `POST ${h.webhook.url.slice(base.length)}`
        )
      ),
    );
    for (const r of routes.filter((r) => r.startsWith("POST /hooks/"))) {
      assert.ok(called.has(r), `${r} is wired`);
    }
  });
});

Deno.test("CRDs", async (t) => {
  const crds = objects.filter((o) => o.kind === "CustomResourceDefinition");
  const expected: Record<string, { shortNames: string[]; columns: string[]; scope: string }> = {
    networkpools: {
      shortNames: ["np"],
      columns: ["CIDR", "Total", "Allocated", "Available", "Grants", "Fragmentation", "Ready", "Age"],
      scope: "Namespaced",
    },
    ipallocations: {
      shortNames: ["ipa"],
      columns: ["Pool", "Type", "Count", "Phase", "Range", "Age"],
      scope: "Namespaced",
    },
    providerconfigs: {
      shortNames: ["pc"],
      columns: ["Provider", "Scope", "Ready", "Validated", "Age"],
      scope: "Namespaced",
    },
    teams: {
      shortNames: ["tm"],
      columns: ["Display Name", "Phase", "Namespace", "Clusters", "Quota", "Age"],
      scope: "Cluster",
    },
    loadbalancerinventories: {
      shortNames: ["lbi"],
      columns: ["Services", "Pending", "Reporting", "Observed", "Age"],
      scope: "Namespaced",
    },
    tenantclusters: {
      shortNames: ["tc"],
      columns: ["Version", "Workers", "Provider", "Environment", "Phase", "LB IPs", "Age"],
      scope: "Namespaced",
    },
  };
  for (const [plural, want] of Object.entries(expected)) {
    await t.step(plural, () => {
      const crd = crds.find((c) => c.spec.names.plural === plural);
      assert.ok(crd, `${plural} CRD`);
      assert.equal(crd.metadata.name, `${plural}.butler.butlerlabs.dev`);
      assert.equal(crd.spec.scope, want.scope);
      assert.deepEqual(crd.spec.names.shortNames, want.shortNames);
      assert.deepEqual(crd.spec.names.categories, ["butler"]);
      const version = crd.spec.versions[0];
      assert.equal(version.name, "v1alpha1");
      assert.deepEqual(version.subresources, { status: {} });
      assert.deepEqual(version.additionalPrinterColumns.map((c: Manifest) => c.name), want.columns);
      const status = version.schema.openAPIV3Schema.properties.status;
      // An inventory's spec and status are written by the same reporter in one step: no generation to observe.
      if (plural !== "loadbalancerinventories") {
        assert.equal(status.properties.observedGeneration.type, "integer");
      } else assert.equal(status.properties.observedGeneration, undefined);
    });
  }
});

Deno.test("IPAllocation single-object rules are in the CRD", () => {
  const crd = objects.find((o) =>
    o.kind === "CustomResourceDefinition" && o.spec.names.kind === "IPAllocation"
  )!;
  const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  const rules = spec["x-kubernetes-validations"].map((v: Manifest) => v.rule);
  assert.ok(rules.includes("self == oldSelf"), "spec is immutable");
  assert.ok(rules.includes("!has(self.count) || self.count >= 1"), "count >= 1");
  assert.deepEqual(spec.properties.type.enum, ["nodes", "loadbalancer"]);
  assert.deepEqual(
    spec.properties.pinnedRange["x-kubernetes-validations"].map((v: Manifest) => v.rule),
    ["has(self.startAddress) && has(self.endAddress)"],
  );
  assert.equal(spec.properties.poolRef.properties.namespace.default, "butler-system");
});
