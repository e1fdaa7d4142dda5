/**
 * kubectl-validate (offline, the API server's own validation code: structural schemas, CEL compilation and
 * cost for CRDs; schema, unknown fields and CEL rules for objects) over everything a user applies and every
 * object a fixture says is stored.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { discoverGoldenCases, loadKustomization } from "../../lib/testing/mod.ts";
import { invalidExamples, kubectlValidate, ROOT, yamlFiles } from "./cluster.ts";
import { invalidMessage } from "../../lib/plan/mod.ts";

type Result = { status: string; message?: string };

async function validate(paths: string[]): Promise<Map<string, Result[]>> {
  const r = await kubectlValidate(paths);
  if (!r.stdout.trim().startsWith("{")) throw new Error(`kubectl-validate: ${r.stderr || r.stdout}`);
  const out = JSON.parse(r.stdout) as Record<string, Result[]>;
  return new Map(Object.entries(out).map(([k, v]) => [k.replace(`${ROOT}/`, ""), v]));
}

function failures(results: Map<string, Result[]>): string[] {
  return [...results].flatMap(([file, rs]) =>
    rs.filter((r) => r.status !== "Success").map((r) => `${file}: ${r.message}`)
  );
}

Deno.test("kubectl-validate: manifests/ as kubectl kustomize renders it", async () => {
  const rendered = await new Deno.Command("kubectl", { args: ["kustomize", `${ROOT}/manifests`] }).output();
  assert.ok(rendered.success, new TextDecoder().decode(rendered.stderr));
  const dir = await Deno.makeTempDir();
  await Deno.writeFile(`${dir}/manifests.yaml`, rendered.stdout);
  const results = await validate([`${dir}/manifests.yaml`]);
  const docs = [...results.values()].flat();
  assert.equal(
    docs.length,
    loadKustomization(`${ROOT}/manifests`).length,
    "every rendered document is validated",
  );
  assert.deepEqual(failures(results), []);
});

for (const overlay of ["without-admission-webhooks", "production", "production-monitoring", "ipv6"]) {
  Deno.test(`kubectl-validate: the ${overlay} overlay, cert-manager and prometheus-operator objects included`, async () => {
    const rendered = await new Deno.Command("kubectl", {
      args: ["kustomize", `${ROOT}/examples/kustomize/${overlay}`],
    }).output();
    assert.ok(rendered.success, new TextDecoder().decode(rendered.stderr));
    const docs = parseAllDocuments(new TextDecoder().decode(rendered.stdout)).map((d) => d.toJS());
    assert.equal(
      docs.some((d) => d.kind === "ValidatingWebhookConfiguration"),
      overlay !== "without-admission-webhooks",
      "the webhooks are in the base, and only the component removes them",
    );
    assert.ok(docs.some((d) => d.kind === "Certificate"));
    const dir = await Deno.makeTempDir();
    await Deno.writeFile(`${dir}/overlay.yaml`, rendered.stdout);
    const results = await validate([`${dir}/overlay.yaml`]);
    assert.equal([...results.values()].flat().length, docs.length, "every rendered document is validated");
    assert.deepEqual(failures(results), []);
  });
}

Deno.test("kubectl-validate: the base sized for large pools", async () => {
  const rendered = await new Deno.Command("kubectl", {
    args: ["kustomize", `${ROOT}/examples/kustomize/large-pools`],
  }).output();
  assert.ok(rendered.success, new TextDecoder().decode(rendered.stderr));
  const docs = parseAllDocuments(new TextDecoder().decode(rendered.stdout)).map((d) => d.toJS());
  const hooks = docs.find((d) => d.kind === "Deployment")!.spec.template.spec.containers[0];
  assert.deepEqual(hooks.env.find((e: { name: string }) => e.name === "BODY_LIMIT_BYTES"), {
    name: "BODY_LIMIT_BYTES",
    value: "83886080",
  });
  assert.equal(hooks.resources.limits.memory, "1536Mi");
  const dir = await Deno.makeTempDir();
  await Deno.writeFile(`${dir}/large-pools.yaml`, rendered.stdout);
  const results = await validate([`${dir}/large-pools.yaml`]);
  assert.equal([...results.values()].flat().length, docs.length, "every rendered document is validated");
  assert.deepEqual(failures(results), []);
});

Deno.test("kubectl-validate: every example is valid", async () => {
  const files = yamlFiles(`${ROOT}/examples`).filter((f) => !f.includes("/examples/invalid/"));
  assert.ok(files.length >= 25, `${files.length} example files`);
  const results = await validate(files);
  assert.equal(results.size, files.length);
  assert.deepEqual(failures(results), []);
});

Deno.test("kubectl-validate: every invalid example is refused with its message", async (t) => {
  const examples = invalidExamples();
  const results = await validate(examples.map((e) => e.path));
  const policies = new Set(
    loadKustomization(`${ROOT}/manifests`).filter((d) => d.kind === "ValidatingAdmissionPolicy")
      .map((d) => d.metadata.name),
  );
  for (const e of examples) {
    await t.step(e.path.replace(`${ROOT}/`, ""), () => {
      const [r] = results.get(e.path.replace(`${ROOT}/`, "")) ?? [];
      if (e.refusedBy) {
        // Offline validation has no admission policies: the schema accepts it, the policy (real API tier) refuses.
        assert.equal(
          r?.status,
          "Success",
          `${e.path} is refused by the schema, not by ${e.refusedBy}: ${r?.message}`,
        );
        assert.ok(policies.has(e.refusedBy), `${e.refusedBy} is not a shipped ValidatingAdmissionPolicy`);
        return;
      }
      assert.equal(r?.status, "Failure", `${e.path} was accepted`);
      // In the API server's words (kubectl-validate prints a scalar CEL failure with the field's type, not its value).
      const message = invalidMessage(r, e.object).message;
      assert.ok(message.includes(e.expect), `got: ${message}\nexpected to contain: ${e.expect}`);
    });
  }
});

/**
 * Fixture objects that model something stored (parents, observed children, related objects) and the children a
 * hook asks for (Metacontroller applies them) must be objects a cluster accepts. A fixture whose directory name
 * starts with `stored-before-rule-` models an object stored before a rule existed and is left out on purpose.
 */
Deno.test("kubectl-validate: every object a fixture stores or asks for", async () => {
  const dir = await Deno.makeTempDir();
  const cases = discoverGoldenCases(`${ROOT}/tests/fixtures`).filter((c) =>
    c.hook !== "admission" && !/\/stored-before-rule-/.test(c.dir)
  );
  let n = 0;
  const write = (origin: string, obj: unknown) => {
    const o = obj as { apiVersion?: string; kind?: string } | null;
    if (!o?.apiVersion || !o.kind) return;
    Deno.writeTextFileSync(`${dir}/${String(n++).padStart(5, "0")}.json`, JSON.stringify({ ...o }, null, 1));
    origins.push(origin);
  };
  const origins: string[] = [];
  const groups = (map: unknown) =>
    Object.values((map ?? {}) as Record<string, Record<string, unknown>>).flatMap((g) =>
      Object.values(g ?? {})
    );
  for (const c of cases) {
    const name = c.dir.replace(`${ROOT}/tests/fixtures/`, "");
    const req = JSON.parse(Deno.readTextFileSync(`${c.dir}/request.json`));
    const res = JSON.parse(Deno.readTextFileSync(`${c.dir}/response.json`));
    for (const obj of [req.parent, req.object]) write(`${name} request parent`, obj);
    for (const obj of groups(req.children)) write(`${name} request child`, obj);
    for (const obj of groups(req.attachments)) write(`${name} request attachment`, obj);
    for (const obj of groups(req.related)) write(`${name} request related`, obj);
    for (const obj of [...(res.children ?? []), ...(res.attachments ?? [])]) {
      write(`${name} response child`, obj);
    }
  }
  assert.ok(n > 300, `${n} fixture objects`);
  const results = await validate([dir]);
  const bad = [...results].flatMap(([file, rs]) => {
    const i = Number(/(\d+)\.json$/.exec(file)?.[1]);
    return rs.filter((r) => r.status !== "Success").map((r) => `${origins[i]}: ${r.message}`);
  });
  assert.deepEqual(bad, []);
});
