/**
 * `plan` and a real API server agree: what the plan refuses (schema and CEL rules in process, kubectl-validate's
 * second opinion agreeing, the admission policies, the webhooks) the API server refuses with the same words, and
 * what it admits the API server stores. Plans run through the CLI exactly as users run it; the live snapshot is a real `kubectl get`.
 */
import assert from "node:assert/strict";
import { LEDGER_NAME } from "../../hooks/tenantcluster/reservations.ts";
import { planCli } from "../plan/helpers.ts";
import {
  ensureNamespaces,
  installManifests,
  invalidExamples,
  kubectl,
  kubectlOk,
  ROOT,
  type Run,
  serveAdmission,
  shippedWebhooks,
  untilRun,
} from "./cluster.ts";

const NOW = "2026-11-23T10:00:00Z";

/** One refusal line of a text plan: the object and who refused it with which message. */
interface Refused {
  readonly name: string;
  readonly by: string;
  readonly message: string;
}

async function plan(
  args: string[],
  stdin?: string,
): Promise<{ code: number; stdout: string; refused: Refused[] }> {
  const out = await planCli(["--now", NOW, ...args], stdin === undefined ? {} : { stdin });
  const stdout = out.stdout;
  assert.ok(out.code === 0 || out.code === 1 || out.code === 3, out.stderr);
  assert.match(
    stdout,
    /Schemas and CEL rules of Butler's kinds: checked in process against manifests\/crds\./,
  );
  assert.match(stdout, /Second opinion \(kubectl-validate\): agrees; core and RBAC kinds checked by it\./);
  const refused = [...stdout.matchAll(/^ {2}! (\S+ \S+) {2}\(.+\)\n {6}refused by ([^:]+): (.+)$/gm)]
    .map(([, name, by, message]) => ({ name: name!, by: by!, message: message! }));
  return { code: out.code, stdout, refused };
}

/** The API server refused with the plan's words (kubectl prints several causes one per line: each is there). */
function agrees(server: Run, refusal: Refused, causes: readonly string[] = []): void {
  assert.notEqual(server.code, 0, `${refusal.name}: the plan refuses it, the API server stored it`);
  for (const words of causes.length ? causes : [refusal.message]) {
    assert.ok(
      server.stderr.includes(words),
      `${refusal.name}:\n  plan:   ${words}\n  server: ${server.stderr}`,
    );
  }
}

/** The causes of a schema refusal with several, which the plan prints one per line as kubectl does. */
function causesOf(stdout: string): string[] {
  return [...stdout.matchAll(/^ {8}\* (.+)$/gm)].map((m) => m[1]!);
}

/** `kubectl apply` of a file as a GitOps sync does it (server-side, taking the fields over), as a dry run. */
const applyDryRun = (file: string) =>
  kubectl(["apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", file]);

const create = (yaml: string, dryRun = false) =>
  kubectl(["create", ...(dryRun ? ["--dry-run=server"] : []), "-f", "-"], { stdin: yaml });

Deno.test("plan and a real API server agree", async (t) => {
  await installManifests();
  const server = await serveAdmission();
  try {
    await kubectlOk(["apply", "--server-side", "-f", "-"], {
      stdin: JSON.stringify(await shippedWebhooks(`https://127.0.0.1:${server.addr.port}`)),
    });

    await t.step("every invalid example is refused by both, in the same words", async (s) => {
      const examples = invalidExamples();
      const namespaces = [
        ...new Set(examples.map((e) => /^ {2}namespace: (\S+)$/m.exec(Deno.readTextFileSync(e.path))?.[1])),
      ].filter((ns): ns is string => ns !== undefined);
      await ensureNamespaces(namespaces);
      // The plan is given the same namespaces, a team's labelled as its Team makes it (no Team creates them here).
      const namespaceYaml = namespaces.map((n) =>
        `apiVersion: v1\nkind: Namespace\nmetadata: { name: ${n}${
          n.startsWith("team-") ? `, labels: { butler.butlerlabs.dev/team: ${n.slice(5)} }` : ""
        } }\n`
      )
        .join("---\n");
      for (const e of examples) {
        await s.step(e.path.replace(`${ROOT}/examples/invalid/`, ""), async () => {
          const planned = await plan(["-", e.path], namespaceYaml);
          assert.equal(planned.code, 1);
          const [refusal] = planned.refused;
          assert.ok(refusal, planned.stdout);
          const causes = causesOf(planned.stdout);
          const words = [refusal.message, ...causes].join("\n");
          assert.ok(words.includes(e.expect), `${words}\nexpected: ${e.expect}`);
          const r = await untilRun(
            () => kubectl(["create", "--dry-run=server", "-f", e.path]),
            (x) => x.code !== 0,
          );
          agrees(r, refusal, causesOf(planned.stdout));
        });
      }
    });

    const team = `apiVersion: butler.butlerlabs.dev/v1alpha1
kind: Team
metadata: { name: planned }
spec:
  access:
    users: [{ name: amy@example.com, role: admin }]
  resourceLimits: { maxClusters: 2 }
  clusterDefaults: { kubernetesVersion: v1.31.0 }
  environments: [{ name: dev }, { name: prod }]
`;
    const tc = (name: string, env: string, annotations = "{}") =>
      `apiVersion: butler.butlerlabs.dev/v1alpha1
kind: TenantCluster
metadata:
  name: ${name}
  namespace: team-planned
  labels: { butler.butlerlabs.dev/environment: ${env} }
  annotations: ${annotations}
spec: { providerConfigRef: { name: aws-us-east, namespace: butler-system } }
`;
    const provider = ["credentials/aws-credentials.yaml", "providerconfigs/aws-us-east.yaml"]
      .map((f) => Deno.readTextFileSync(`${ROOT}/examples/${f}`)).join("\n---\n");

    await t.step("quota and environments: the same clusters are admitted and refused", async () => {
      const clusters = [tc("one", "dev"), tc("qa", "qa"), tc("two", "prod"), tc("three", "dev")];
      const planned = await plan(["-"], [provider, team, ...clusters].join("\n---\n"));
      assert.deepEqual(planned.refused.map((r) => r.name), [
        "TenantCluster team-planned/qa",
        "TenantCluster team-planned/three",
      ]);
      await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: [provider, team].join("\n---\n") });
      // The namespace as the Team controller creates it: the webhooks select team namespaces by this label.
      await kubectlOk(["apply", "--server-side", "-f", "-"], {
        stdin:
          "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-planned\n  labels: { butler.butlerlabs.dev/team: planned }\n",
      });
      for (const [i, yaml] of clusters.entries()) {
        const name = `TenantCluster team-planned/${["one", "qa", "two", "three"][i]}`;
        const refusal = planned.refused.find((r) => r.name === name);
        if (refusal) {
          // A webhook configuration takes effect within seconds: ask (dry run) until it answers.
          agrees(await untilRun(() => create(yaml, true), (x) => x.code !== 0), refusal);
        } else {
          const r = await create(yaml);
          assert.equal(r.code, 0, `${name}: the plan admits it, the API server says ${r.stderr}`);
        }
      }
    });

    await t.step("a cluster on its Team's default provider, and a frozen team: refused by both", async () => {
      const teams = `apiVersion: butler.butlerlabs.dev/v1alpha1
kind: Team
metadata: { name: planned-default }
spec:
  access: { users: [{ name: amy@example.com, role: admin }] }
  providerConfigRef: { name: aws-us-east }
  resourceLimits: { allowedProviders: [harvester] }
  clusterDefaults: { kubernetesVersion: v1.31.0 }
---
apiVersion: butler.butlerlabs.dev/v1alpha1
kind: Team
metadata: { name: planned-frozen }
spec:
  access: { users: [{ name: amy@example.com, role: admin }] }
  providerConfigRef: { name: aws-us-east }
  resourceLimits: { maxClusters: 0 }
  clusterDefaults: { kubernetesVersion: v1.31.0 }
`;
      const clusters = ["planned-default", "planned-frozen"].map((team) =>
        `apiVersion: butler.butlerlabs.dev/v1alpha1
kind: TenantCluster
metadata: { name: on-default, namespace: team-${team} }
spec: {}
`
      );
      const planned = await plan(["-"], [provider, teams, ...clusters].join("\n---\n"));
      assert.deepEqual(planned.refused.map((r) => r.name), [
        "TenantCluster team-planned-default/on-default",
        "TenantCluster team-planned-frozen/on-default",
      ]);
      await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: [provider, teams].join("\n---\n") });
      for (const team of ["planned-default", "planned-frozen"]) {
        await kubectlOk(["apply", "--server-side", "-f", "-"], {
          stdin:
            `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-${team}\n  labels: { butler.butlerlabs.dev/team: ${team} }\n`,
        });
      }
      for (const [i, yaml] of clusters.entries()) {
        const refusal = planned.refused[i]!;
        agrees(await untilRun(() => create(yaml, true), (x) => x.code !== 0), refusal);
      }
      assert.match(
        planned.refused[0]!.message,
        /provider "aws" \(ProviderConfig "aws-us-east"\) is not allowed/,
      );
      assert.match(planned.refused[1]!.message, /team quota limits to 0/);
    });

    await t.step(
      "against a live export: an environment move needs the migration annotation in both",
      async () => {
        const live = await kubectlOk([
          "get",
          "teams,tenantclusters,providerconfigs,secrets",
          "-A",
          "-o",
          "yaml",
        ]);
        const moved = tc("one", "prod");
        const dir = Deno.makeTempDirSync();
        try {
          Deno.writeTextFileSync(`${dir}/live.yaml`, live);
          Deno.writeTextFileSync(`${dir}/desired.yaml`, [provider, team, moved].join("\n---\n"));
          const p = await plan(["--live", `${dir}/live.yaml`, `${dir}/desired.yaml`]);
          const refusal = p.refused.find((r) => r.name === "TenantCluster team-planned/one");
          assert.ok(refusal, p.stdout);
          assert.equal(refusal.by, "ValidatingAdmissionPolicy butler-tenantcluster-identity");
          agrees(
            await applyDryRun(`${dir}/desired.yaml`),
            refusal,
          );
          const annotated = tc(
            "one",
            "prod",
            JSON.stringify({ "butler.butlerlabs.dev/migration-operation": "true" }),
          );
          Deno.writeTextFileSync(`${dir}/desired.yaml`, [provider, team, annotated].join("\n---\n"));
          const ok = await plan(["--live", `${dir}/live.yaml`, `${dir}/desired.yaml`]);
          assert.deepEqual(ok.refused, []);
          const r = await applyDryRun(`${dir}/desired.yaml`);
          assert.equal(r.code, 0, r.stderr);
        } finally {
          Deno.removeSync(dir, { recursive: true });
        }
      },
    );
  } finally {
    await server.shutdown();
    await kubectl(["delete", "validatingwebhookconfiguration", "butler-admission", "--ignore-not-found"]);
    await kubectl([
      "delete",
      "tenantclusters",
      "--all",
      "-n",
      "team-planned",
      "--ignore-not-found",
      "--wait=false",
    ]);
    await kubectl(["delete", "team", "planned", "--ignore-not-found", "--wait=false"]);
    // Admitted creates leave reservations in the quota ledger: a second run starts from an empty one.
    await kubectl(["delete", "configmap", LEDGER_NAME, "-n", "team-planned", "--ignore-not-found"]);
  }
});
