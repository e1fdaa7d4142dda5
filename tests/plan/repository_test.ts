/**
 * `plan` on what a repository holds, as kubectl and the API server take it (issue #57): objects kubectl reads from
 * YAML 1.1, kinds resolved as kubectl resolves them, metadata judged, every refusal with its line, one unreadable
 * document reported while the rest is judged, and the exit codes of the common CI uses.
 */
import assert from "node:assert/strict";
import type { CommandRun } from "../../lib/testing/mod.ts";
import { NOW, planCli, ROOT } from "./helpers.ts";

function cli(args: string[], stdin?: string): Promise<CommandRun> {
  return planCli(["--now", NOW, ...args], {
    env: { KUBECTL_VALIDATE: "/nonexistent/kubectl-validate", NO_COLOR: "1" },
    ...(stdin === undefined ? {} : { stdin }),
  });
}

const TEAM = (name: string, extra = "") =>
  `apiVersion: butler.butlerlabs.dev/v1alpha1
kind: Team
metadata:
  name: ${name}${extra}
spec:
  displayName: T
  access:
    users: [{ name: ann@example.com, role: admin }]
`;

Deno.test("plan reads manifests as kubectl does", async (t) => {
  await t.step(
    "YAML 1.1: an unquoted yes is a boolean; merge keys and repeated keys as go-yaml v2",
    async () => {
      const pc = `apiVersion: butler.butlerlabs.dev/v1alpha1
kind: ProviderConfig
metadata: { name: px, namespace: butler-system }
spec:
  provider: proxmox
  credentialsRef: { name: proxmox-credentials }
  proxmox: &base
    endpoint: https://proxmox.example.com:8006
    insecure: yes
    nodes: [pve1]
    storage: local-lvm
    templateID: 9000
    vmidRange: { start: 200, end: 300 }
  proxmox: { <<: *base, storage: ceph }
`;
      const r = await cli(["-o", "json", "-"], pc);
      assert.notEqual(r.code, 2, r.stderr);
      const stored = JSON.parse(r.stdout).items.find((o: { kind: string }) => o.kind === "ProviderConfig");
      assert.equal(stored.spec.proxmox.insecure, true);
      assert.equal(stored.spec.proxmox.storage, "ceph");
      assert.equal(stored.spec.proxmox.endpoint, "https://proxmox.example.com:8006");
    },
  );

  await t.step(
    "one unreadable document is reported with its line, and the others are judged: exit 2",
    async () => {
      const r = await cli(
        ["-"],
        `${TEAM("first")}---\nkind: Team\nmetadata: { name: [broken\n---\n${TEAM("third")}`,
      );
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stdout, /^ {2}x \(stdin\)#2 {2}\(\(stdin\)#2, line 11\)\n {6}unreadable: /m);
      assert.match(r.stdout, /^ {2}\+ Team first /m);
      assert.match(r.stdout, /^ {2}\+ Team third /m);
      assert.match(r.stdout, /^Result: 1 unreadable, 0 refused/m);
    },
  );

  await t.step(
    "a List is flattened, its items taking the list's kind and apiVersion when they have none",
    async () => {
      const list = `apiVersion: butler.butlerlabs.dev/v1alpha1
kind: TeamList
items:
  - metadata: { name: listed }
    spec: { displayName: L, access: { users: [{ name: ann@example.com, role: admin }] } }
`;
      const r = await cli(["-"], list);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /^ {2}\+ Team listed {2}\(\(stdin\)#1 items\[0\]\)$/m);
    },
  );

  await t.step(
    "generateName without a name is created under a generated name, the same every run",
    async () => {
      const r = await cli(["-"], TEAM("").replace("  name: \n", "  generateName: gen-\n"));
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const name = /^ {2}\+ Team (gen-[a-z0-9]{5}) /m.exec(r.stdout)?.[1];
      assert.ok(name, r.stdout);
      assert.equal(
        (await cli(["-"], TEAM("").replace("  name: \n", "  generateName: gen-\n"))).stdout,
        r.stdout,
      );
    },
  );
});

Deno.test("plan refuses what the API server refuses, at the line it is about", async (t) => {
  await t.step("a misspelled group is refused in kubectl's words, exit 1, at the kind's line", async () => {
    const r = await cli(["-"], TEAM("t").replace("butler.butlerlabs.dev", "butler.butlerlabs.io"));
    assert.equal(r.code, 1);
    assert.match(
      r.stdout,
      /! Team t {2}\(\(stdin\)#1, line 2\)\n {6}refused by API server: no matches for kind "Team" in version "butler\.butlerlabs\.io\/v1alpha1"\n {6}note: plan knows the built-in kinds of Kubernetes, Butler's and those of the CustomResourceDefinitions in the input or --live/m,
    );
  });

  await t.step(
    "a built-in kind the plan does not judge is listed as such; an unknown one is refused",
    async () => {
      const ok = await cli(["-"], "apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: web }\n");
      assert.equal(ok.code, 0);
      assert.match(
        ok.stdout,
        /skipped: Deployment \(apps\/v1\) is served by the API server; plan does not judge it/,
      );
      const typo = await cli(["-"], "apiVersion: apps/v1\nkind: Deploymnet\nmetadata: { name: web }\n");
      assert.equal(typo.code, 1);
      assert.match(typo.stdout, /no matches for kind "Deploymnet" in version "apps\/v1"/);
      const removed = await cli(
        ["-"],
        "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: { name: web }\n",
      );
      assert.equal(removed.code, 1);
    },
  );

  await t.step("a kind whose CRD the input holds is known, and not judged", async () => {
    const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: widgets.example.com }
spec:
  group: example.com
  scope: Namespaced
  names: { kind: Widget, plural: widgets }
  versions: [{ name: v1, served: true, storage: true, schema: { openAPIV3Schema: { type: object } } }]
---
apiVersion: example.com/v1
kind: Widget
metadata: { name: w }
`;
    const r = await cli(["-"], crd);
    assert.equal(r.code, 0, r.stdout);
    assert.match(
      r.stdout,
      /skipped: Widget \(example\.com\/v1\) is served by a CustomResourceDefinition of the input/,
    );
  });

  await t.step(
    "names, label values and an unquoted boolean label are refused, exit 1, at their lines",
    async () => {
      const name = await cli(["-"], TEAM("Payments"));
      assert.equal(name.code, 1);
      assert.match(
        name.stdout,
        /! Team Payments {2}\(\(stdin\)#1, line 4\)\n {6}refused by schema: The Team "Payments" is invalid: metadata\.name: Invalid value: "Payments": a lowercase RFC 1123 subdomain/,
      );
      const label = await cli(["-"], TEAM("t", "\n  labels: { region: retail eu }"));
      assert.equal(label.code, 1);
      assert.match(
        label.stdout,
        /\(\(stdin\)#1, line 5\)\n {6}refused by schema: .*metadata\.labels: Invalid value: "retail eu"/,
      );
      const bool = await cli(["-"], TEAM("t", "\n  labels: { enabled: true }"));
      assert.equal(bool.code, 1, bool.stdout);
      assert.match(
        bool.stdout,
        /\(\(stdin\)#1, line 5\)\n {6}refused by kubectl: unable to decode: json: cannot unmarshal bool into Go struct field ObjectMeta\.metadata\.labels of type string$/m,
      );
    },
  );

  await t.step(
    "a policy's refusal points at the field its rule reads: a Team name too long, at metadata.name",
    async () => {
      const r = await cli(["examples/invalid/team-name-too-long.yaml"]);
      assert.equal(r.code, 1);
      assert.match(r.stdout, /\(examples\/invalid\/team-name-too-long\.yaml#1, line 5\)/);
      const policy = await cli([
        "examples/invalid/providerconfig-borrowed-credentials.yaml",
        "examples/teams/payments.yaml",
      ]);
      assert.match(
        policy.stdout,
        /! ProviderConfig team-payments\/borrowed-harvester {2}\(examples\/invalid\/providerconfig-borrowed-credentials\.yaml#1, line 14\)/,
      );
    },
  );

  await t.step("an object whose namespace never exists is refused at its namespace's line", async () => {
    const r = await cli(
      ["-"],
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  namespace: nowhere\n",
    );
    assert.equal(r.code, 1);
    assert.match(
      r.stdout,
      /! ConfigMap nowhere\/c {2}\(\(stdin\)#1, line 5\)\n {6}refused by API server: namespaces "nowhere" not found/,
    );
  });
});

Deno.test("exit codes for the common CI uses", async (t) => {
  await t.step(
    "one file planned alone: what it names in files not given is listed, not failed (exit 0)",
    async () => {
      const r = await cli(["examples/providerconfigs/aws-us-east.yaml"]);
      assert.equal(r.code, 0, r.stdout);
      assert.match(
        r.stdout,
        /^Waiting on objects the plan was not given .*\n {2}ProviderConfig butler-system\/aws-us-east: Ready=False \(CredentialsInvalid\), waits on Secret butler-system\/aws-credentials$/m,
      );
    },
  );

  await t.step(
    "the same file against --live that holds its Secret converges: exit 0, every object Ready",
    async () => {
      const live = await cli(["-o", "yaml", "examples/credentials/aws-credentials.yaml"]);
      const r = await cli(["--live", "-", "examples/providerconfigs/aws-us-east.yaml"], live.stdout);
      assert.equal(r.code, 0, r.stdout);
      assert.match(
        r.stdout,
        /Result: everything is admitted, the controllers converge and every object is Ready\./,
      );
    },
  );

  await t.step(
    "a repository planned whole that misses a Secret it holds others of: not Ready, exit 3",
    async () => {
      const r = await cli([
        "examples/providerconfigs/aws-us-east.yaml",
        "examples/credentials/gcp-credentials.yaml",
      ]);
      assert.equal(r.code, 3, r.stdout);
      assert.match(
        r.stdout,
        /^Not Ready\n {2}ProviderConfig butler-system\/aws-us-east: Ready=False \(CredentialsInvalid\)$/m,
      );
    },
  );
});

Deno.test("the README's walk-through plans its setup with exit 0", async () => {
  const readme = Deno.readTextFileSync(`${ROOT}README.md`).replace(/\n\s+/g, " ");
  const step = readme.slice(readme.indexOf("See what a setup will do**"));
  const command = /npx -y deno@2\.9\.6 task plan ((?:examples\/[^\s`]+ ?)+)/.exec(step)?.[1];
  assert.ok(command, "the README's plan command");
  const r = await cli(command.trim().split(" "));
  assert.equal(r.code, 0, r.stdout);
});
