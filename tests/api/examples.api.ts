/**
 * Every example is accepted by a real API server (CRD schemas and CEL rules) and every invalid example is refused
 * with its message, the same message kubectl-validate gives offline.
 */
import assert from "node:assert/strict";
import { currentWords } from "../../lib/plan/mod.ts";
import { parseAllDocuments } from "yaml";
import {
  ensureNamespaces,
  getObject,
  installManifests,
  invalidExamples,
  kubectl,
  kubectlOk,
  ROOT,
  yamlFiles,
} from "./cluster.ts";
// One consistent set a user could apply together; the other examples reuse a name from it (the seeds show
// alternative versions of lab-pool, harvester-prod and one IPAllocation) and are checked with a dry run.
import { APPLIED_TOGETHER } from "../plan/helpers.ts";

/** Namespaces the Team controller would create (no controller runs in this tier). */
const TEAM_NAMESPACES = ["team-platform", "team-platform-team", "team-payments"];
/** Where the Cluster API example puts its pool and claim (the claims' namespace, as Cluster API wants). */
const CAPI_NAMESPACES = ["capi-prod"];

function objectsOf(path: string): { kind: string; metadata: { name: string; namespace?: string } }[] {
  return parseAllDocuments(Deno.readTextFileSync(path)).map((d) => d.toJS()).filter(Boolean);
}

Deno.test("examples on a real API server", async (t) => {
  await installManifests();
  await ensureNamespaces([...TEAM_NAMESPACES, ...CAPI_NAMESPACES]);
  const files = yamlFiles(`${ROOT}/examples`).filter((f) => !f.includes("/examples/invalid/"));

  await t.step("every example passes a server-side dry run", async () => {
    for (const file of files) {
      const r = await kubectl([
        "apply",
        "--server-side",
        "--validate=strict",
        "--dry-run=server",
        "-f",
        file,
      ]);
      assert.equal(r.code, 0, `${file}: ${r.stderr}`);
    }
  });

  await t.step("one consistent set is stored and reads back as written", async () => {
    for (const path of APPLIED_TOGETHER) {
      await kubectlOk(["apply", "--server-side", "--validate=strict", "-f", `examples/${path}`]);
    }
    const stored = APPLIED_TOGETHER.flatMap((p) =>
      Deno.statSync(`${ROOT}/examples/${p}`).isDirectory
        ? yamlFiles(`${ROOT}/examples/${p}`)
        : [`${ROOT}/examples/${p}`]
    );
    assert.ok(stored.length >= 20, `${stored.length} files stored`);
    for (const file of stored) {
      for (const want of objectsOf(file)) {
        const got = await getObject(want.kind, want.metadata.name, want.metadata.namespace);
        assert.ok(got, `${want.kind} ${want.metadata.name} was stored`);
        if (want.kind === "Secret") {
          const data = Object.fromEntries(
            Object.entries(got.data as Record<string, string>).map(([k, v]) => [k, atob(v)]),
          );
          assert.deepEqual(missing(data, (want as { stringData?: unknown }).stringData, "data"), [], file);
        } else {
          assert.deepEqual(missing(got.spec, (want as { spec?: unknown }).spec, "spec"), [], file);
        }
      }
    }
  });

  await t.step("an IPAllocation's spec cannot change (the pinned variant over the stored one)", async () => {
    const r = await kubectl([
      "apply",
      "--server-side",
      "--dry-run=server",
      "-f",
      "examples/ipallocations/prod-cluster-lb-pinned.yaml",
    ]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /spec is immutable; delete the IPAllocation and create a new one/);
  });

  await t.step("the stored set is deleted again", async () => {
    for (const path of [...APPLIED_TOGETHER].reverse()) {
      await kubectlOk(["delete", "--wait=true", "--timeout=60s", "-f", `examples/${path}`]);
    }
  });

  await t.step("every invalid example is refused with its message", async (s) => {
    for (const e of invalidExamples()) {
      await s.step(e.path.replace(`${ROOT}/examples/invalid/`, ""), async () => {
        const r = await kubectl(["create", "--validate=strict", "--dry-run=server", "-f", e.path]);
        assert.notEqual(r.code, 0, `${e.path} was accepted`);
        // In current words: Kubernetes 1.30 prints a CEL failure's value as its type (plan-and-plugin.md says so).
        const words = currentWords(r.stderr, e.object);
        assert.ok(words.includes(e.expect), `got: ${r.stderr}\nexpected to contain: ${e.expect}`);
      });
    }
  });
});

/** Every field of `want` is in `got` with the same value (the API server may add defaults, never drop a field). */
function missing(got: unknown, want: unknown, path: string): string[] {
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) return [`${path}: ${JSON.stringify(got)}`];
    return want.flatMap((w, i) => missing(got[i], w, `${path}[${i}]`));
  }
  if (want && typeof want === "object") {
    if (!got || typeof got !== "object") return [`${path}: ${JSON.stringify(got)}`];
    return Object.entries(want).flatMap(([k, w]) =>
      missing((got as Record<string, unknown>)[k], w, `${path}.${k}`)
    );
  }
  return got === want ? [] : [`${path}: ${JSON.stringify(got)} instead of ${JSON.stringify(want)}`];
}
