/**
 * Argo CD sync order: every object Butler installs carries a sync wave, so that the Namespace, the CRDs and the
 * cert-manager objects come first, the hook service and its RBAC next, and admission and the Metacontroller
 * controllers last (a controller synced before the service it calls would fail its first hooks); the example
 * Applications sync Butler before the platform objects, which skip the dry run while their CRDs are missing.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { loadKustomization, type Manifest } from "../lib/testing/mod.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const WAVE = "argocd.argoproj.io/sync-wave";
const wave = (m: Manifest) => Number(m.metadata.annotations?.[WAVE]);

function component(dir: string): Manifest[] {
  const k = parseAllDocuments(Deno.readTextFileSync(`${dir}/kustomization.yaml`))[0]!.toJS() as {
    resources: string[];
  };
  return k.resources.flatMap((r) =>
    parseAllDocuments(Deno.readTextFileSync(`${dir}/${r}`)).map((d) => d.toJS() as Manifest).filter(Boolean)
  );
}

Deno.test("Argo CD sync waves order Butler's install", () => {
  const objects = [
    ...loadKustomization(`${ROOT}manifests`),
    ...component(`${ROOT}manifests/components/monitoring`),
    ...component(`${ROOT}manifests/components/network-policy`),
    ...component(`${ROOT}manifests/components/reporter`),
  ];
  for (const m of objects) {
    assert.ok(Number.isInteger(wave(m)), `${m.kind} ${m.metadata.name} has a sync wave`);
  }
  const waves = (kinds: string[]) => objects.filter((m) => kinds.includes(m.kind)).map(wave);
  const first = waves(["Namespace", "CustomResourceDefinition", "Certificate", "Issuer"]);
  const service = waves([
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "PodDisruptionBudget",
    "Service",
    "Deployment",
    "NetworkPolicy",
  ]);
  const last = waves([
    "CompositeController",
    "DecoratorController",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "ServiceMonitor",
    "PrometheusRule",
  ]);
  assert.ok(first.length >= 9 && service.length >= 5 && last.length >= 10);
  assert.ok(Math.max(...first) < Math.min(...service), "CRDs and cert-manager objects before the service");
  assert.ok(Math.max(...service) < Math.min(...last), "the service before what calls it");
  assert.equal(Math.max(...objects.map(wave)), Math.min(...last), "nothing after the controllers");
});

Deno.test("the example Applications sync Butler first, then the objects that need its CRDs", () => {
  const apps = parseAllDocuments(Deno.readTextFileSync(`${ROOT}manifests/argocd/applications.yaml`))
    .map((d) => d.toJS() as Manifest);
  const [butler, objects] = apps;
  assert.equal(apps.length, 2);
  assert.ok(wave(butler!) < wave(objects!));
  assert.ok(objects!.spec.syncPolicy.syncOptions.includes("SkipDryRunOnMissingResource=true"));
  // The path Butler's Application points at exists and renders.
  const path = butler!.spec.source.path as string;
  assert.ok(Deno.statSync(`${ROOT}${path}/kustomization.yaml`).isFile, path);
});
