/**
 * `kubectl butler` (and `butleradm`, the name Butler's admission messages use): the kubectl plugin for what
 * Butler's API does not do in one `kubectl` call. Commands: `env list|add|remove|migrate`, `cluster create`,
 * `pool show`, `team usage`, `ledger`, `plan`. It follows kubectl's conventions: its connection flags, `-o json`,
 * errors on stderr, exit code 0 when everything asked was done, 1 when something was refused or failed, 2 for a
 * usage error.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { parseAllDocuments, stringify } from "yaml";
import { computeUsage, type TeamProvider } from "../hooks/team/usage.ts";
import { ObservedCluster, teamNamespace, TeamSpec } from "../lib/api/mod.ts";
import { createKubeClient, KubeApiError, type KubeClient } from "../lib/kube/mod.ts";
import {
  clusterObject,
  type ClusterRequest,
  preview,
  quantityProblems,
  renderPreview,
} from "./cluster_create.ts";
import { type Paint, paintFor } from "./colour.ts";
import { type ConnectionFlags, openConnection } from "./connection.ts";
import {
  environmentRows,
  renderEnvironments,
  type TeamObject,
  withEnvironment,
  withoutEnvironment,
} from "./env_edit.ts";
import { allMoved, clusterPath, formatResults, migrateClusters, selectClusters } from "./env_migrate.ts";
import type { ClusterObject } from "./env_migrate.ts";
import { ledgerReport, type LedgerSource } from "./ledger.ts";
import {
  type AllocationInfo,
  type PoolObject,
  poolReport,
  renderPoolSvg,
  renderPoolText,
} from "./pool_show.ts";
import { renderUsageText, usageJson } from "./team_usage.ts";

/** Where a run writes and how it reaches the API (tests pass their own). */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Opens the API client and names the context's namespace. */
  readonly connect: (flags: ConnectionFlags) => { kube: KubeClient; namespace: string };
  /** The program's name as invoked (`kubectl butler` or `butleradm`). */
  readonly name: string;
  /** Colour for standard output (plain unless it is a terminal and NO_COLOR is unset). */
  readonly paint?: Paint;
  /** Writes a file a command was asked to write (`--svg FILE`). */
  readonly writeFile: (path: string, text: string) => void;
  /** Reads a file a command was given (`-f FILE`), and standard input (`-f -`). */
  readonly readFile: (path: string) => string;
  readonly readStdin: () => Promise<string>;
  /** Runs `plan` with its own arguments (plan.ts); resolves to its exit code. */
  readonly plan: (args: readonly string[]) => Promise<number>;
}

const GLOBAL_HELP = `Global flags (as kubectl's):
      --kubeconfig PATH   the kubeconfig (default: KUBECONFIG, then ~/.kube/config)
      --context NAME      the context to use
  -n, --namespace NS      the namespace (default: the context's)
      --as USER           impersonate USER; --as-group GROUP (repeatable) adds groups
  -o, --output FORMAT     text (default), json or yaml for scripts
  -h, --help              this help`;

const HELP: Record<string, string> = {
  "": `Butler's kubectl plugin (also installed as butleradm, the name admission's messages use).

Usage: {name} <command> [flags]

Commands:
  env list       a Team's environments with their limits, clusters and usage
  env add        add an environment to a Team
  env remove     remove an environment from a Team (refused while clusters use it)
  env migrate    move TenantClusters to another environment (label and migration annotation together)
  cluster create create a TenantCluster in a Team's environment, showing the shape it will get first
  pool show      a picture of a NetworkPool: its address space, figures and grants
  team usage     a Team's quota as bars: clusters, nodes, CPU, memory, storage, environments, members
  ledger         a NetworkPool's ledger: its grants in address order, or the patch for a downgrade
  plan           what admission and the controllers will do with a folder of manifests (offline)

Run "{name} <command> --help" for a command's flags and examples.

${GLOBAL_HELP}`,
  env: `Environments of a Team.

Usage: {name} env list|add|remove|migrate ...

Commands:
  list           a Team's environments with their limits, clusters and usage
  add            add an environment to a Team
  remove         remove an environment from a Team
  migrate        move TenantClusters to another environment`,
  "env list":
    `A Team's environments: their limits, clusters, use of the cluster limit, and the quota verdict the Team
controller gives them (its own measures, from the clusters as they are now).

Usage:
  {name} env list --team TEAM [-o text|json]

Examples:
  {name} env list --team payments

${GLOBAL_HELP}`,
  "env add":
    `Add an environment to a Team: one update of the Team, decided by the API server's policies (who may change
environments and their limits).

Usage:
  {name} env add ENV --team TEAM [--description TEXT] [--max-clusters N] [--max-clusters-per-member N] [--dry-run]

Examples:
  {name} env add staging --team payments --description "Release candidates" --max-clusters 4

${GLOBAL_HELP}`,
  "env remove":
    `Remove an environment from a Team. Refused, before anything is sent and in the Team webhook's words, while
TenantClusters use it: migrate or delete them first (env migrate).

Usage:
  {name} env remove ENV --team TEAM [--dry-run]

Examples:
  {name} env remove staging --team payments

${GLOBAL_HELP}`,
  cluster: `TenantClusters.

Usage: {name} cluster create NAME ...

Commands:
  create         create a TenantCluster in a Team's environment`,
  "cluster create":
    `Create a TenantCluster in a Team (and environment), as the seeds' "butlerctl cluster --environment": you
are its creator-email (from a SelfSubjectReview: who the API server says you are), and the shape it will get is
shown first, each value with its source (given, environment, team, platform, default), as the controller will
resolve it. Only the fields you give are set; admission decides (quota, environment access, per-member cap).

Usage:
  {name} cluster create NAME --team TEAM [--environment ENV] [--version V] [--workers N] [--cpu Q]
      [--memory Q] [--disk Q] [--provider PROVIDERCONFIG] [--dry-run] [-o text|json]

Examples:
  {name} cluster create web-2 --team payments --environment dev
  {name} cluster create api --team payments --environment prod --workers 5 --cpu 8 --memory 32Gi --dry-run

${GLOBAL_HELP}`,
  pool: `NetworkPools.

Usage: {name} pool show POOL ...

Commands:
  show           a picture of a NetworkPool`,
  "pool show":
    `A picture of a NetworkPool: its address space as a grid of cells (each marked by what its addresses
are), the figures its controller reports (utilisation, largest free block, fragmentation), and every grant with
its tenant (from the IPAllocations you may list).

Usage:
  {name} pool show POOL [-n NAMESPACE] [-o text|json|svg] [--svg FILE]

Flags:
  -n, --namespace NS      the pool's namespace (default butler-system)
  -o, --output FORMAT     text (default), json or yaml for scripts, svg for a picture on standard output
      --svg FILE          also write the picture as SVG to FILE (under the current directory)

Examples:
  {name} pool show lab-pool
  {name} pool show lab-pool --svg lab-pool.svg
  {name} pool show lab-pool -o json | jq '.grants | length'

${GLOBAL_HELP}`,
  team: `Teams.

Usage: {name} team usage TEAM ...

Commands:
  usage          a Team's quota as bars`,
  "team usage":
    `A Team's quota as bars: clusters, worker nodes, CPU, memory and storage against its limits, each
environment's clusters, each member's clusters where an environment caps them, and each ProviderConfig's per-team
limits. Judged by the Team controller's own rules (80 % near limit, above 100 % over limit), from the clusters as
they are now.

Usage:
  {name} team usage TEAM [-o text|json]

Examples:
  {name} team usage payments
  {name} team usage payments -o json | jq '.measures[] | select(.state != "OK")'

${GLOBAL_HELP}`,
  ledger:
    `A NetworkPool's ledger: a table of its grants in address order (first and last address, count, when,
the IPAllocation's UID), -o json for scripts, or --v1: the status patch that writes the ledger in the first format
(version 0.1), for a downgrade. From the API, or from a file (-f; YAML or JSON, a List too; - for standard input).

Usage:
  {name} ledger POOL [-n NAMESPACE] [-o text|json] [--v1]
  {name} ledger -f FILE [-o text|json] [--v1]

Examples:
  {name} ledger lab-pool
  kubectl get np -A -o yaml | {name} ledger -f -

${GLOBAL_HELP}`,
  plan:
    `What admission and the controllers will do with a folder of manifests, offline: see "{name} plan --help"
(the flags are plan's own; README, Plan before you sync).`,
  "env migrate": `Move TenantClusters to another environment, as the seeds' contract asks: one update sets the
environment label and the migration annotation together, a second removes the annotation. Each cluster is
decided by admission on its own (quota, per-member cap, environment access, unknown environment): a refusal of
one does not stop the others, and the summary says which moved and why the others did not.

Usage:
  {name} env migrate CLUSTER... --to ENV [-n NAMESPACE] [--dry-run]
  {name} env migrate --team TEAM (--selector SELECTOR | --unlabelled) --to ENV [--dry-run]

Flags:
      --to ENV            the environment to move to (required)
      --team TEAM         every cluster of TEAM (in its namespace team-TEAM, or -n) that the selection takes
  -l, --selector SEL      with --team: a label selector
      --unlabelled        with --team: clusters without an environment label
      --dry-run           ask admission without changing anything (a server-side dry run of the same update)

Examples:
  {name} env migrate web-1 web-2 --to production -n team-payments
  {name} env migrate --team payments --unlabelled --to development --dry-run
  {name} env migrate --team payments -l tier=frontend --to staging -o json

${GLOBAL_HELP}`,
};

/** A usage error: printed with a pointer to the help, exit code 2. */
class UsageError extends Error {}

const OPTIONS = {
  kubeconfig: { type: "string" },
  context: { type: "string" },
  namespace: { type: "string", short: "n" },
  as: { type: "string" },
  "as-group": { type: "string", multiple: true },
  output: { type: "string", short: "o" },
  help: { type: "boolean", short: "h" },
  to: { type: "string" },
  team: { type: "string" },
  selector: { type: "string", short: "l" },
  unlabelled: { type: "boolean" },
  "dry-run": { type: "boolean" },
  svg: { type: "string" },
  filename: { type: "string", short: "f" },
  v1: { type: "boolean" },
  description: { type: "string" },
  "max-clusters": { type: "string" },
  "max-clusters-per-member": { type: "string" },
  environment: { type: "string" },
  version: { type: "string" },
  workers: { type: "string" },
  cpu: { type: "string" },
  memory: { type: "string" },
  disk: { type: "string" },
  provider: { type: "string" },
} as const;

/**
 * Runs one command line; resolves to the exit code.
 *
 * @example
 * ```ts
 * const code = await runCli(["env", "migrate", "c1", "--to", "prod", "-n", "team-a"], io);
 * ```
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const help = (key: string) => HELP[key]!.replaceAll("{name}", io.name) + "\n";
  // plan has flags of its own (plan.ts): it gets the command line as it is.
  if (argv[0] === "plan") return await io.plan(argv.slice(1));
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    io.stderr(`error: ${err instanceof Error ? err.message : String(err)}\nSee "${io.name} --help".\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, sub, ...rest] = positionals;
  const key = [command, sub].filter((w) => w !== undefined).join(" ");
  if (values.help) {
    const known = HELP[key] !== undefined ? key : HELP[command ?? ""] !== undefined ? command ?? "" : "";
    io.stdout(help(known));
    return 0;
  }
  try {
    if (key === "env migrate") return await envMigrate(rest, values, io);
    if (key === "pool show") return await poolShow(rest, values, io);
    if (key === "env list" || key === "env add" || key === "env remove") {
      return await envEdit(sub as "list" | "add" | "remove", rest, values, io);
    }
    if (key === "team usage") return await teamUsage(rest, values, io);
    if (key === "cluster create") return await clusterCreate(rest, values, io);
    if (command === "ledger") return await ledger([sub, ...rest].filter((w) => w !== undefined), values, io);
    if (command === undefined) {
      io.stdout(help(""));
      return 0;
    }
    throw new UsageError(`unknown command "${key}"`);
  } catch (err) {
    if (err instanceof UsageError) {
      const topic = key in HELP ? key : command !== undefined && command in HELP ? command : "";
      io.stderr(`error: ${err.message}\nSee "${io.name} ${topic ? `${topic} ` : ""}--help".\n`);
      return 2;
    }
    io.stderr(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

/** `-o`, one of the forms a command prints (text unless asked), or a usage error naming them. */
function outputOf<T extends string>(values: Values, forms: readonly T[]): T {
  const output = values.output ?? "text";
  if (!forms.includes(output as T)) {
    throw new UsageError(
      `--output must be ${forms.slice(0, -1).join(", ")} or ${forms.at(-1)}, not "${output}"`,
    );
  }
  return output as T;
}

/** A value as JSON or YAML for scripts (kubectl's -o json|yaml). */
function structured(value: unknown, output: "json" | "yaml"): string {
  return output === "json" ? JSON.stringify(value, null, 2) + "\n" : stringify(value);
}

async function envMigrate(names: readonly string[], values: Values, io: CliIo): Promise<number> {
  const output = outputOf(values, ["text", "json", "yaml"]);
  if (!values.to) throw new UsageError("--to ENV is required");
  if (values.team && names.length) throw new UsageError("name clusters or select them with --team, not both");
  if (!values.team && (values.selector || values.unlabelled)) {
    throw new UsageError("--selector and --unlabelled select within a team: add --team TEAM");
  }
  if (values.team && !values.selector && !values.unlabelled) {
    throw new UsageError("--team needs --selector or --unlabelled (a bulk migration names what it moves)");
  }
  if (!values.team && !names.length) throw new UsageError("name at least one cluster, or use --team");
  const { kube, namespace: contextNamespace } = connect(values, io);
  let targets: { namespace: string; name: string }[];
  if (values.team) {
    const namespace = values.namespace ?? `team-${values.team}`;
    const items = await kube.list(clusterPath(namespace), {
      ...(values.selector ? { labelSelector: values.selector } : {}),
    }) as ClusterObject[];
    targets = selectClusters(items, { team: values.team, ...(values.unlabelled ? { unlabelled: true } : {}) })
      .map((c) => ({ namespace: c.metadata.namespace, name: c.metadata.name }));
  } else {
    const namespace = values.namespace ?? contextNamespace;
    targets = names.map((name) => ({ namespace, name }));
  }
  const dryRun = values["dry-run"] ?? false;
  const results = await migrateClusters(kube, targets, values.to, dryRun);
  io.stdout(
    output === "text" ? formatResults(results, dryRun, io.paint) : structured({ dryRun, results }, output),
  );
  return allMoved(results) ? 0 : 1;
}

function connect(values: Values, io: CliIo): { kube: KubeClient; namespace: string } {
  return io.connect({
    ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context ? { context: values.context } : {}),
    ...(values.as ? { as: values.as } : {}),
    ...(values["as-group"] ? { asGroups: values["as-group"] } : {}),
  });
}

const GROUP_PATH = "/apis/butler.butlerlabs.dev/v1alpha1";

async function poolShow(names: readonly string[], values: Values, io: CliIo): Promise<number> {
  const output = outputOf(values, ["text", "json", "yaml", "svg"]);
  if (names.length !== 1) throw new UsageError("name one NetworkPool");
  const namespace = values.namespace ?? "butler-system";
  const { kube } = connect(values, io);
  const pool = await kube.get(
    `${GROUP_PATH}/namespaces/${encodeURIComponent(namespace)}/networkpools/${encodeURIComponent(names[0]!)}`,
  ) as PoolObject | undefined;
  if (!pool) {
    io.stderr(`error: NetworkPool ${namespace}/${names[0]} not found\n`);
    return 1;
  }
  let allocations: AllocationInfo[] = [];
  try {
    allocations = await kube.list(`${GROUP_PATH}/ipallocations`) as AllocationInfo[];
  } catch (err) {
    // Tenants are a courtesy: the picture and the figures need only the pool.
    io.stderr(
      `warning: IPAllocations not listed, tenants not shown (${err instanceof Error ? err.message : err})\n`,
    );
  }
  const r = poolReport(pool, allocations);
  if (!r.ok) {
    io.stderr(`error: ${r.message}\n`);
    return 1;
  }
  if (values.svg) io.writeFile(values.svg, renderPoolSvg(r.report));
  io.stdout(
    output === "json" || output === "yaml"
      ? structured(r.report, output)
      : output === "svg"
      ? renderPoolSvg(r.report)
      : renderPoolText(r.report),
  );
  return 0;
}

async function teamUsage(names: readonly string[], values: Values, io: CliIo): Promise<number> {
  const output = outputOf(values, ["text", "json", "yaml"]);
  if (names.length !== 1) throw new UsageError("name one Team");
  const name = names[0]!;
  const { kube } = connect(values, io);
  const team = await kube.get(`${GROUP_PATH}/teams/${encodeURIComponent(name)}`) as
    | { spec?: unknown }
    | undefined;
  if (!team) {
    io.stderr(`error: Team ${name} not found\n`);
    return 1;
  }
  const spec = TeamSpec.safeParse(team.spec ?? {});
  if (!spec.success) {
    io.stderr(`error: Team ${name}: its spec does not read: ${spec.error.issues[0]?.message}\n`);
    return 1;
  }
  const namespace = teamNamespace(name);
  const clusters = (await kube.list(`${GROUP_PATH}/namespaces/${namespace}/tenantclusters`)).flatMap((c) => {
    const parsed = ObservedCluster.safeParse(c);
    return parsed.success ? [parsed.data] : [];
  });
  const providers: TeamProvider[] = [];
  for (const ns of [namespace, "butler-system"]) {
    try {
      const list = await kube.list(`${GROUP_PATH}/namespaces/${ns}/providerconfigs`) as {
        metadata: { name: string };
        spec?: { limits?: { maxClustersPerTeam?: number; maxNodesPerTeam?: number } };
      }[];
      providers.push(...list.map((p) => ({
        key: `${ns}/${p.metadata.name}`,
        maxClustersPerTeam: p.spec?.limits?.maxClustersPerTeam,
        maxNodesPerTeam: p.spec?.limits?.maxNodesPerTeam,
      })));
    } catch (err) {
      io.stderr(
        `warning: ProviderConfigs in ${ns} not listed, their per-team limits not shown (${
          err instanceof Error ? err.message : err
        })\n`,
      );
    }
  }
  const usage = computeUsage(spec.data, clusters, providers);
  io.stdout(
    output === "text" ? renderUsageText(name, usage, io.paint) : structured(usageJson(name, usage), output),
  );
  return 0;
}

/** A count flag: a whole number >= 0, or a usage error naming the flag. */
function count(values: Values, flag: "max-clusters" | "max-clusters-per-member"): number | undefined {
  const text = values[flag];
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text)) throw new UsageError(`--${flag} must be a whole number >= 0, not "${text}"`);
  return Number(text);
}

async function envEdit(
  verb: "list" | "add" | "remove",
  names: readonly string[],
  values: Values,
  io: CliIo,
): Promise<number> {
  const output = outputOf(values, ["text", "json", "yaml"]);
  if (!values.team) throw new UsageError("--team TEAM is required");
  if (verb === "list" ? names.length !== 0 : names.length !== 1) {
    throw new UsageError(verb === "list" ? "env list takes no arguments" : `name one environment to ${verb}`);
  }
  const maxClusters = count(values, "max-clusters");
  const perMember = count(values, "max-clusters-per-member");
  const { kube } = connect(values, io);
  const path = `${GROUP_PATH}/teams/${encodeURIComponent(values.team)}`;
  const team = await kube.get(path) as TeamObject | undefined;
  if (!team) {
    io.stderr(`error: Team ${values.team} not found\n`);
    return 1;
  }
  const spec = TeamSpec.safeParse(team.spec ?? {});
  if (!spec.success) {
    io.stderr(`error: Team ${values.team}: its spec does not read: ${spec.error.issues[0]?.message}\n`);
    return 1;
  }
  const clusters = await kube.list(`${GROUP_PATH}/namespaces/${teamNamespace(values.team)}/tenantclusters`);
  if (verb === "list") {
    const observed = clusters.flatMap((c) => {
      const parsed = ObservedCluster.safeParse(c);
      return parsed.success ? [parsed.data] : [];
    });
    const rows = environmentRows(spec.data, computeUsage(spec.data, observed));
    io.stdout(
      output === "text"
        ? renderEnvironments(values.team, rows, io.paint)
        : structured({ team: values.team, environments: rows }, output),
    );
    return 0;
  }
  const env = names[0]!;
  const next = verb === "add"
    ? withEnvironment(team, {
      name: env,
      ...(values.description !== undefined ? { description: values.description } : {}),
      ...(maxClusters !== undefined ? { maxClusters } : {}),
      ...(perMember !== undefined ? { maxClustersPerMember: perMember } : {}),
    })
    : withoutEnvironment(team, env, clusters);
  if (!next.ok) {
    io.stderr(`error: ${next.message}\n`);
    return 1;
  }
  const dryRun = values["dry-run"] ?? false;
  try {
    await kube.write("PUT", dryRun ? `${path}?dryRun=All` : path, next.team);
  } catch (err) {
    if (err instanceof KubeApiError && err.status >= 400 && err.status < 500) {
      io.stderr(`error: refused: ${err.detail || `${err.status} ${err.reason}`}\n`);
      return 1;
    }
    throw err;
  }
  const done = verb === "add" ? "added to" : "removed from";
  io.stdout(`environment "${env}" ${dryRun ? `would be ${done}` : done} team "${values.team}"\n`);
  return 0;
}

async function clusterCreate(names: readonly string[], values: Values, io: CliIo): Promise<number> {
  const output = outputOf(values, ["text", "json", "yaml"]);
  if (names.length !== 1) throw new UsageError("name one cluster to create");
  if (!values.team) throw new UsageError("--team TEAM is required");
  if (values.workers !== undefined && !/^[1-9]\d{0,4}$/.test(values.workers)) {
    throw new UsageError(`--workers must be a whole number >= 1, not "${values.workers}"`);
  }
  const problems = quantityProblems(values);
  if (problems.length) throw new UsageError(problems.join("; "));
  const { kube } = connect(values, io);
  const team = await kube.get(`${GROUP_PATH}/teams/${encodeURIComponent(values.team)}`) as
    | { spec?: unknown }
    | undefined;
  if (!team) {
    io.stderr(`error: Team ${values.team} not found\n`);
    return 1;
  }
  const spec = TeamSpec.safeParse(team.spec ?? {});
  if (!spec.success) {
    io.stderr(`error: Team ${values.team}: its spec does not read: ${spec.error.issues[0]?.message}\n`);
    return 1;
  }
  const review = await kube.write("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
    apiVersion: "authentication.k8s.io/v1",
    kind: "SelfSubjectReview",
  }) as { status?: { userInfo?: { username?: string } } };
  const creator = review.status?.userInfo?.username;
  if (!creator) {
    io.stderr(
      "error: the API server did not say who you are (SelfSubjectReview): cannot set creator-email\n",
    );
    return 1;
  }
  const request: ClusterRequest = {
    name: names[0]!,
    team: values.team,
    creator,
    ...(values.environment !== undefined ? { environment: values.environment } : {}),
    ...(values.version !== undefined ? { version: values.version } : {}),
    ...(values.workers !== undefined ? { workers: Number(values.workers) } : {}),
    ...(values.cpu !== undefined ? { cpu: values.cpu } : {}),
    ...(values.memory !== undefined ? { memory: values.memory } : {}),
    ...(values.disk !== undefined ? { disk: values.disk } : {}),
    ...(values.provider !== undefined ? { provider: values.provider } : {}),
  };
  // Where the Team's default ProviderConfig is (team namespace first), as the controller looks for it.
  const found = new Set<string>();
  const defaultName = spec.data.providerConfigRef?.name;
  for (
    const ns of defaultName && values.provider === undefined
      ? [teamNamespace(values.team), "butler-system"]
      : []
  ) {
    try {
      const pc = await kube.get(
        `${GROUP_PATH}/namespaces/${ns}/providerconfigs/${encodeURIComponent(defaultName!)}`,
      );
      if (pc) found.add(`${ns}/${defaultName}`);
    } catch { /* not readable here: looked for where the controller would find it last */ }
  }
  const rows = preview(request, spec.data, (ref) => found.has(`${ref.namespace}/${ref.name}`));
  const object = clusterObject(request);
  const dryRun = values["dry-run"] ?? false;
  if (output === "text") io.stdout(renderPreview(request, rows));
  const path = `${GROUP_PATH}/namespaces/${teamNamespace(values.team)}/tenantclusters`;
  try {
    await kube.write("POST", dryRun ? `${path}?dryRun=All` : path, object);
  } catch (err) {
    if (err instanceof KubeApiError && err.status >= 400 && err.status < 500) {
      if (output !== "text") {
        io.stdout(structured({ dryRun, cluster: object, preview: rows, created: false }, output));
      }
      io.stderr(`error: refused: ${err.detail || `${err.status} ${err.reason}`}\n`);
      return 1;
    }
    throw err;
  }
  io.stdout(
    output !== "text"
      ? structured({ dryRun, cluster: object, preview: rows, created: !dryRun }, output)
      : `tenantcluster ${teamNamespace(values.team)}/${request.name} ${
        dryRun ? "would be created" : "created"
      }\n`,
  );
  return 0;
}

async function ledger(names: readonly string[], values: Values, io: CliIo): Promise<number> {
  const output = outputOf(values, ["text", "json"]);
  if (values.v1 && output === "json") throw new UsageError("--v1 prints a patch: leave out -o json");
  if (values.filename !== undefined && names.length) {
    throw new UsageError("name a pool or give -f FILE, not both");
  }
  if (values.filename === undefined && names.length !== 1) {
    throw new UsageError("name one NetworkPool, or give -f FILE");
  }
  let sources: LedgerSource[];
  if (values.filename !== undefined) {
    const text = values.filename === "-" ? await io.readStdin() : io.readFile(values.filename);
    sources = parseAllDocuments(text).map((d) => d.toJS() as LedgerSource).filter((d) => d);
  } else {
    const namespace = values.namespace ?? "butler-system";
    const { kube } = connect(values, io);
    const pool = await kube.get(
      `${GROUP_PATH}/namespaces/${encodeURIComponent(namespace)}/networkpools/${
        encodeURIComponent(names[0]!)
      }`,
    ) as LedgerSource | undefined;
    if (!pool) {
      io.stderr(`error: NetworkPool ${namespace}/${names[0]} not found\n`);
      return 1;
    }
    sources = [pool];
  }
  const { out, errors } = ledgerReport(sources, values.v1 ? "v1" : output === "json" ? "json" : "table");
  io.stdout(out);
  for (const e of errors) io.stderr(`error: ${e}\n`);
  return errors.length ? 1 : 0;
}

/** The real I/O: the terminal and the kubeconfig. */
export function terminalIo(name: string): CliIo {
  const encoder = new TextEncoder();
  return {
    name,
    paint: paintFor(Deno.stdout.isTerminal(), Deno.env.get("NO_COLOR")),
    stdout: (text) => Deno.stdout.writeSync(encoder.encode(text)),
    stderr: (text) => Deno.stderr.writeSync(encoder.encode(text)),
    readFile: (path) => Deno.readTextFileSync(path),
    readStdin: () => new Response(Deno.stdin.readable).text(),
    async plan() {
      // plan.ts reads Deno.args after its command word ("plan") and exits with its own code.
      await import("../plan.ts");
      return 0;
    },
    writeFile(path, text) {
      try {
        Deno.writeTextFileSync(path, text);
      } catch (err) {
        // The launcher lets the plugin write under the current directory (and the temporary one, for plan) only.
        throw new Error(
          err instanceof Deno.errors.NotCapable
            ? `cannot write ${path}: the plugin writes only under the current directory (and the temporary one)`
            : `cannot write ${path}: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    },
    connect(flags) {
      const opened = openConnection(flags);
      // A person waits on the answer: one retry, and a timeout long enough for a slow webhook.
      return {
        kube: createKubeClient(opened.connection, { timeoutMs: 15_000, retries: 1 }),
        namespace: opened.namespace,
      };
    },
  };
}

if (import.meta.main) {
  // Installed as kubectl-butler (kubectl runs it as "kubectl butler") and as butleradm: the same program.
  Deno.exit(await runCli(Deno.args, terminalIo("kubectl butler")));
}
