/**
 * Least privilege at run time: the shipped command lines (the image's CMD, the hook Deployment's args, the
 * reporter's) narrow Deno's permissions to what each process does, agree with each other and with the variables
 * the code reads, and the image carries every module the commands load and no test or benchmark. The API server
 * tier (tests/api/permissions.api.ts) starts the command line itself.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { REPORTER_VARIABLES, SERVICE_VARIABLES, TEST_VARIABLES } from "../lib/config/mod.ts";
import { kubectlKustomize, loadKustomization, type Manifest } from "../lib/testing/mod.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const API = "$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)";

/** `--allow-x=a,b` flags of a deno command line: name → list (`[]` for a bare flag). */
function permissions(args: readonly string[]): Map<string, string[]> {
  return new Map(
    args.filter((a) => a.startsWith("--allow-") || a.startsWith("--deny-") || a === "-A").map((a) => {
      const [flag, list] = a.split("=", 2) as [string, string | undefined];
      return [flag, list === undefined ? [] : list.split(",")];
    }),
  );
}

const hooks = loadKustomization(`${ROOT}manifests`).find((o) =>
  o.kind === "Deployment" && o.metadata.name === "butler-hooks"
)!;
const container = hooks.spec.template.spec.containers[0] as Manifest;
const env = Object.fromEntries(container.env.map((e: Manifest) => [e.name, e.value]));
const reporter =
  (parse(Deno.readTextFileSync(`${ROOT}manifests/components/reporter/deployment.yaml`)) as Manifest)
    .spec.template.spec.containers[0] as Manifest;

/** The Dockerfile's CMD (exec form), and what it COPYs into /app. */
function dockerfile(): { cmd: string[]; copied: string[] } {
  const lines = Deno.readTextFileSync(`${ROOT}Dockerfile`).split("\n");
  const cmd = JSON.parse(lines.find((l) => l.startsWith("CMD "))!.slice(4)) as string[];
  const copied = lines.filter((l) => l.startsWith("COPY ")).flatMap((l) =>
    l.slice(5).trim().split(/\s+/).slice(0, -1)
  );
  return { cmd, copied };
}

Deno.test("the hook service's permissions", async (t) => {
  const args = container.args as string[];
  const granted = permissions(args);
  await t.step("every permission is a list: no bare --allow-read, --allow-env, --allow-net, nor -A", () => {
    assert.deepEqual([...granted.keys()].sort(), ["--allow-env", "--allow-net", "--allow-read"]);
    for (const [flag, list] of granted) assert.ok(list.length > 0, `${flag} names what it allows`);
  });
  await t.step("it reads its code, the dependency cache, its certificates and the ServiceAccount", () => {
    assert.deepEqual(granted.get("--allow-read"), [
      "/app",
      "/deno-dir",
      "/etc/butler",
      "/var/run/secrets/kubernetes.io/serviceaccount",
    ]);
    const files = Object.entries(env).filter(([k]) => k.endsWith("_FILE"));
    assert.ok(files.length >= 5, "the TLS files are configured");
    for (const [name, path] of files) {
      assert.ok(
        granted.get("--allow-read")!.some((dir) => String(path).startsWith(`${dir}/`)),
        `${name}=${path} is readable`,
      );
    }
  });
  await t.step("the variables it reads, and not the test-only ones", () => {
    assert.deepEqual(
      granted.get("--allow-env"),
      SERVICE_VARIABLES.filter((v) => !TEST_VARIABLES.includes(v)),
    );
    assert.ok(
      TEST_VARIABLES.every((v) => SERVICE_VARIABLES.includes(v)),
      "the test variables are the service's",
    );
    for (const name of Object.keys(env).filter((n) => !n.startsWith("DENO_"))) {
      assert.ok(granted.get("--allow-env")!.includes(name), `${name} is set, so it is allowed`);
    }
  });
  await t.step("it listens on its two ports and reaches only the API server", () => {
    assert.deepEqual(granted.get("--allow-net"), [
      `${env.HOST ?? "0.0.0.0"}:${env.PORT}`,
      `${env.HOST ?? "0.0.0.0"}:${env.WEBHOOK_PORT}`,
      API,
    ]);
    assert.deepEqual(
      container.ports.map((p: Manifest) => String(p.containerPort)),
      [env.PORT, env.WEBHOOK_PORT],
    );
  });
  await t.step("the image's CMD is the same command line without the API server", () => {
    const { cmd } = dockerfile();
    assert.deepEqual(cmd, args.map((a) => a.replace(`,${API}`, "")));
    assert.match(Deno.readTextFileSync(`${ROOT}Dockerfile`), new RegExp(`PORT=${env.PORT}`));
  });
  await t.step("components/webhook-client-auth's CA file is readable", () => {
    const text = Deno.readTextFileSync(`${ROOT}manifests/components/webhook-client-auth/kustomization.yaml`);
    const ca = /WEBHOOK_CLIENT_CA_FILE, value: (\S+) \}/.exec(text)?.[1];
    assert.ok(ca?.startsWith("/etc/butler/"), `WEBHOOK_CLIENT_CA_FILE ${ca}`);
  });
  await t.step("components/ipv6 brackets the API server's address and listens on ::", () => {
    const rendered = kubectlKustomize(`${ROOT}examples/kustomize/ipv6`);
    if (!rendered) return; // kubectl is absent here; the API server tier renders it with kubectl.
    assert.ok(rendered.ok, rendered.stderr);
    const c = rendered.objects.find((o) => o.kind === "Deployment" && o.metadata.name === "butler-hooks")!
      .spec.template.spec.containers[0];
    assert.deepEqual(permissions(c.args).get("--allow-net"), [
      `[::]:${env.PORT}`,
      `[::]:${env.WEBHOOK_PORT}`,
      "[$(KUBERNETES_SERVICE_HOST)]:$(KUBERNETES_SERVICE_PORT)",
    ]);
    assert.ok(c.env.some((e: Manifest) => e.name === "HOST" && e.value === "::"));
  });
});

Deno.test("the reporter's permissions", async (t) => {
  const granted = permissions(reporter.args);
  await t.step("it reads its code, the dependency cache and the ServiceAccount, nothing else", () => {
    assert.deepEqual(granted.get("--allow-read"), [
      "/app",
      "/deno-dir",
      "/var/run/secrets/kubernetes.io/serviceaccount",
    ]);
  });
  await t.step("the variables it reads", () => {
    assert.deepEqual(granted.get("--allow-env"), [...REPORTER_VARIABLES]);
    for (const e of reporter.env.filter((e: Manifest) => !e.name.startsWith("DENO_"))) {
      assert.ok(granted.get("--allow-env")!.includes(e.name), `${e.name} is set, so it is allowed`);
    }
  });
  await t.step(
    "the network whole (tenants are anywhere) but the clouds' metadata, and an egress policy",
    () => {
      assert.deepEqual(granted.get("--allow-net"), []);
      assert.deepEqual(granted.get("--deny-net"), [
        "169.254.169.254",
        "169.254.170.2",
        "169.254.170.23",
        "100.100.100.200",
        "[fd00:ec2::254]",
        "[fd20:ce::254]",
      ]);
      const policy = parse(Deno.readTextFileSync(`${ROOT}manifests/components/reporter/networkpolicy.yaml`));
      assert.ok(JSON.stringify(policy).includes("Egress"));
    },
  );
  await t.step("the same program and flags as the image, but the reporter command", () => {
    const { cmd } = dockerfile();
    assert.deepEqual(reporter.args.slice(0, 4), cmd.slice(0, 4));
    assert.deepEqual(reporter.args.slice(-2), ["main.ts", "reporter"]);
  });
});

/** A .dockerignore pattern as a regular expression (`**` any folders, `*` within a name). */
function ignoreRegExp(pattern: string): RegExp {
  const source = pattern.split("/").map((part) =>
    part === "**" ? "(?:.*/)?" : `${part.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}/`
  ).join("").replace(/\(\?:\.\*\/\)\?\//g, "(?:.*/)?");
  return new RegExp(`^${source.replace(/\/$/, "")}(?:/.*)?$`);
}

Deno.test("the image: every module the commands load, and no test or benchmark", async (t) => {
  const ignored = Deno.readTextFileSync(`${ROOT}.dockerignore`).split("\n").map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#")).map(ignoreRegExp);
  const { copied } = dockerfile();
  const shipped = (path: string) =>
    copied.some((c) => path === c || path.startsWith(`${c}/`)) && !ignored.some((re) => re.test(path));

  await t.step("the patterns mean what they say", () => {
    assert.ok(!shipped("lib/ipam/allocator_test.ts"));
    assert.ok(!shipped("bench/team_data.ts"));
    assert.ok(!shipped("hooks/team/sync_bench.ts"));
    assert.ok(!shipped("lib/testing/golden.ts"));
    assert.ok(shipped("lib/ipam/allocator.ts"));
    assert.ok(shipped("plan.ts"));
  });
  await t.step("every local module of main.ts, worker.ts and plan.ts is copied and not ignored", async () => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "main.ts"],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const modules = (JSON.parse(new TextDecoder().decode(out.stdout)) as { modules: { specifier: string }[] })
      .modules.map((m) => m.specifier).filter((s) => s.startsWith("file://"))
      .map((s) => new URL(s).pathname.slice(ROOT.length));
    for (const entry of ["main.ts", "server.ts", "reporter.ts", "worker.ts", "plan.ts"]) {
      assert.ok(modules.includes(entry), `${entry} is in main.ts's graph`);
    }
    assert.ok(modules.length > 50, `${modules.length} modules`);
    assert.deepEqual(modules.filter((m) => !shipped(m)), []);
  });
  await t.step("no test, benchmark, bench data or test helper in the copied folders", () => {
    const walk = (dir: string): string[] =>
      [...Deno.readDirSync(`${ROOT}${dir}`)].flatMap((e) =>
        e.isDirectory ? walk(`${dir}/${e.name}`) : [`${dir}/${e.name}`]
      );
    const files = copied.flatMap((c) => Deno.statSync(`${ROOT}${c}`).isDirectory ? walk(c) : [c]).filter(
      shipped,
    );
    assert.ok(files.length > 50);
    assert.deepEqual(
      files.filter((f) => /_test\.ts$|_bench\.ts$|bench_data\.ts$|^lib\/testing\//.test(f)),
      [],
    );
  });
});
