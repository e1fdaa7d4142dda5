import assert from "node:assert/strict";
import { KubeApiError, type KubeClient } from "../lib/kube/mod.ts";
import { type CliIo, runCli } from "./main.ts";

/** A run with its output captured, the API answering as `kube` says (or never reached), files from `files`. */
async function run(argv: string[], kube?: Partial<KubeClient>, given: Record<string, string> = {}) {
  const out: string[] = [];
  const files = new Map<string, string>();
  const err: string[] = [];
  let connected: unknown;
  let planned: readonly string[] | undefined;
  const io: CliIo = {
    name: "kubectl butler",
    writeFile: (path, text) => files.set(path, text),
    readFile: (path) => {
      if (!(path in given)) throw new Error(`${path}: not found`);
      return given[path]!;
    },
    readStdin: () => Promise.resolve(given["-"] ?? ""),
    plan: (args) => {
      planned = args;
      return Promise.resolve(0);
    },
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    connect(flags) {
      connected = flags;
      return {
        namespace: "team-ctx",
        kube: {
          get: () => Promise.resolve(undefined),
          list: () => Promise.resolve([]),
          write: (_m, p) => Promise.reject(new KubeApiError(500, "InternalError", "no", p)),
          ...kube,
        },
      };
    },
  };
  const code = await runCli(argv, io);
  return { code, out: out.join(""), err: err.join(""), connected, files, planned };
}

Deno.test("kubectl butler: flags, help and exit codes", async (t) => {
  await t.step("--help for the plugin and for env migrate, with examples", async () => {
    const top = await run(["--help"]);
    assert.equal(top.code, 0);
    assert.match(top.out, /env migrate/);
    const migrate = await run(["env", "migrate", "--help"]);
    assert.match(
      migrate.out,
      /Examples:\n {2}kubectl butler env migrate web-1 web-2 --to production -n team-payments/,
    );
  });
  await t.step("usage errors exit 2, on stderr, naming the help", async () => {
    const cases: [string[], RegExp][] = [
      [["env", "migrate", "c1"], /--to ENV is required/],
      [["env", "migrate", "--to", "prod"], /name at least one cluster, or use --team/],
      [["env", "migrate", "--team", "a", "--to", "prod"], /--team needs --selector or --unlabelled/],
      [["env", "migrate", "c1", "--team", "a", "--unlabelled", "--to", "prod"], /not both/],
      [["env", "migrate", "c1", "--unlabelled", "--to", "prod"], /add --team TEAM/],
      [
        ["env", "migrate", "c1", "--to", "prod", "-o", "wide"],
        /--output must be text, json or yaml, not "wide"/,
      ],
      [["ledger", "p", "-o", "yaml"], /--output must be text or json, not "yaml"/],
      [["env", "migrate", "--bogus"], /Unknown option '--bogus'/],
      [["nope"], /unknown command "nope"/],
      [["ledger", "--bogus"], /Unknown option '--bogus'/],
      [["cluster", "create", "c"], /--team TEAM is required/],
      [
        ["cluster", "create", "c", "--team", "a", "--workers", "0"],
        /--workers must be a whole number >= 1, not "0"/,
      ],
      [["cluster", "create", "c", "--team", "a", "--memory", "16GB"], /--memory must be a positive quantity/],
      [["env", "add", "staging"], /--team TEAM is required/],
      [["env", "add", "--team", "a"], /name one environment to add/],
      [["env", "list", "x", "--team", "a"], /env list takes no arguments/],
      [
        ["env", "add", "s", "--team", "a", "--max-clusters=-1"],
        /--max-clusters must be a whole number >= 0, not "-1"/,
      ],
      [
        ["env", "add", "s", "--team", "a", "--max-clusters", "two"],
        /--max-clusters must be a whole number >= 0, not "two"/,
      ],
      [["ledger", "a", "b"], /name one NetworkPool, or give -f FILE/],
      [["ledger", "a", "-f", "x.yaml"], /not both/],
      [["ledger", "a", "--v1", "-o", "json"], /--v1 prints a patch/],
    ];
    for (const [argv, message] of cases) {
      const r = await run(argv);
      assert.equal(r.code, 2, argv.join(" "));
      assert.equal(r.out, "");
      assert.match(r.err, message);
      assert.match(
        r.err,
        /See "kubectl butler (env migrate |env add |env list |cluster create |ledger )?--help"/,
      );
    }
  });
  await t.step(
    "names are looked up in -n, else the context's namespace; connection flags are passed",
    async () => {
      const seen: string[] = [];
      const get = (p: string) => {
        seen.push(p);
        return Promise.resolve(undefined);
      };
      const r = await run([
        "env",
        "migrate",
        "c1",
        "--to",
        "prod",
        "--as",
        "alice",
        "--as-group",
        "g",
        "--context",
        "x",
      ], {
        get,
      });
      assert.deepEqual(r.connected, { context: "x", as: "alice", asGroups: ["g"] });
      assert.equal(seen[0], "/apis/butler.butlerlabs.dev/v1alpha1/namespaces/team-ctx/tenantclusters/c1");
      assert.equal(r.code, 1, "not found is not done");
      assert.equal(
        r.out,
        "team-ctx/c1: (no environment) -> prod: not found\nmoved 0 of 1 cluster(s) to prod; 1 not found\n",
      );
      await run(["env", "migrate", "c1", "--to", "prod", "-n", "team-b"], { get });
      assert.equal(seen[1], "/apis/butler.butlerlabs.dev/v1alpha1/namespaces/team-b/tenantclusters/c1");
    },
  );
  await t.step("--team lists the team's namespace with the selector; -o json for scripts", async () => {
    let listed: unknown;
    const r = await run(["env", "migrate", "--team", "a", "-l", "tier=web", "--to", "prod", "-o", "json"], {
      list: (path, options) => {
        listed = { path, options };
        return Promise.resolve([]);
      },
    });
    assert.deepEqual(listed, {
      path: "/apis/butler.butlerlabs.dev/v1alpha1/namespaces/team-a/tenantclusters",
      options: { labelSelector: "tier=web" },
    });
    assert.equal(r.code, 0);
    assert.deepEqual(JSON.parse(r.out), { dryRun: false, results: [] });
    const yaml = await run(["env", "migrate", "--team", "a", "-l", "tier=web", "--to", "prod", "-o", "yaml"]);
    assert.equal(yaml.out, "dryRun: false\nresults: []\n");
  });
  await t.step("an API failure is an error on stderr, exit 1", async () => {
    const r = await run(["env", "migrate", "--team", "a", "--unlabelled", "--to", "prod"], {
      list: (p) => Promise.reject(new KubeApiError(403, "Forbidden", "alice cannot list", p)),
    });
    assert.equal(r.code, 1);
    assert.match(r.err, /^error: .*alice cannot list\n$/);
  });
  await t.step(
    "ledger: from the API, or a file (a List too); an unreadable ledger is an error, exit 1",
    async () => {
      const pool = (name: string, grants: string[]) => ({
        kind: "NetworkPool",
        metadata: { name, namespace: "butler-system" },
        status: { ledger: { version: 2, base: "10.40.0.0", grants } },
      });
      const good = pool("lab-pool", []);
      const fromApi = await run(["ledger", "lab-pool"], {
        get: (p) =>
          Promise.resolve(p.endsWith("/namespaces/butler-system/networkpools/lab-pool") ? good : undefined),
      });
      assert.equal(fromApi.code, 0, fromApi.err);
      assert.equal(
        fromApi.out,
        "NetworkPool butler-system/lab-pool: 0 grant(s)\nFIRST  LAST  COUNT  GRANTED AT  IPALLOCATION UID\n\n",
      );
      const list = JSON.stringify({ kind: "List", items: [good, pool("broken", ["zz"])] });
      const fromFile = await run(["ledger", "-f", "pools.json", "-o", "json"], undefined, {
        "pools.json": list,
      });
      assert.equal(fromFile.code, 1);
      assert.deepEqual(JSON.parse(fromFile.out), { pool: "butler-system/lab-pool", grants: [] });
      assert.match(fromFile.err, /^error: NetworkPool butler-system\/broken: status\.ledger/);
      const stdin = await run(["ledger", "-f", "-", "--v1"], undefined, { "-": JSON.stringify(good) });
      assert.equal(stdin.code, 0, stdin.err);
      assert.match(stdin.out, /^\{"status":\{"grants":/);
      const missing = await run(["ledger", "gone"]);
      assert.equal(missing.code, 1);
      assert.equal(missing.err, "error: NetworkPool butler-system/gone not found\n");
    },
  );
  await t.step("plan gets its own command line, flags and all", async () => {
    const r = await run(["plan", "examples/", "--live", "live.yaml", "--diff"]);
    assert.equal(r.code, 0);
    assert.deepEqual(r.planned, ["examples/", "--live", "live.yaml", "--diff"]);
  });
});

Deno.test("kubectl butler version: deno.json's version, without reaching a cluster", async (t) => {
  const { version } = JSON.parse(Deno.readTextFileSync(new URL("../deno.json", import.meta.url)));
  await t.step("as text", async () => {
    const r = await run(["version"]);
    assert.deepEqual([r.code, r.out, r.err, r.connected], [0, `kubectl butler ${version}\n`, "", undefined]);
  });
  await t.step("as JSON", async () => {
    const r = await run(["version", "-o", "json"]);
    assert.deepEqual([r.code, JSON.parse(r.out)], [0, { version }]);
  });
  await t.step("no arguments", async () => {
    const r = await run(["version", "extra"]);
    assert.equal(r.code, 2);
    assert.match(r.err, /version takes no arguments/);
  });
});
