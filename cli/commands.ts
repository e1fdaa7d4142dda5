/**
 * The commands of `kubectl butler`: each reads its flags, asks the API through `io`, and prints what the pure
 * module of its command computes ({@link ./env_migrate.ts}, {@link ./env_edit.ts}, {@link ./cluster_create.ts},
 * {@link ./pool_show.ts}, {@link ./team_usage.ts}, {@link ./ledger.ts}). The only place commands do I/O.
 *
 * @module
 */
import { parseAllDocuments } from "yaml";
import { computeUsage, teamProvider } from "../hooks/team/usage.ts";
import { ObservedCluster, ProviderLimitsView, teamNamespace, TeamSpec } from "../lib/api/mod.ts";
import { butlerPath } from "../lib/butler/mod.ts";
import { VERSION } from "../lib/build/mod.ts";
import type { KubeClient } from "../lib/kube/mod.ts";
import {
  clusterObject,
  type ClusterRequest,
  preview,
  quantityProblems,
  renderPreview,
} from "./cluster_create.ts";
import {
  type CliIo,
  connect,
  count,
  outputOf,
  refusal,
  structured,
  UsageError,
  type Values,
} from "./command.ts";
import {
  environmentRows,
  renderEnvironments,
  type TeamObject,
  withEnvironment,
  withoutEnvironment,
} from "./env_edit.ts";
import { allMoved, formatResults, migrateClusters, selectClusters } from "./env_migrate.ts";
import type { ClusterObject } from "./env_migrate.ts";
import { adopt } from "./adopt_command.ts";
import { ledgerReport, type LedgerSource } from "./ledger.ts";
import {
  type AllocationInfo,
  type PoolObject,
  poolReport,
  renderPoolSvg,
  renderPoolText,
} from "./pool_show.ts";
import { renderUsageText, usageJson } from "./team_usage.ts";

/** A command: the words after it, the flags, the I/O; resolves to the exit code. */
export type Command = (names: readonly string[], values: Values, io: CliIo) => Promise<number>;

/** A Team and its spec as the hooks read it; `undefined` once stderr says why there is none. */
async function readTeam(
  kube: KubeClient,
  name: string,
  io: CliIo,
): Promise<{ team: TeamObject; spec: TeamSpec } | undefined> {
  const team = await kube.get(butlerPath("teams", undefined, name)) as TeamObject | undefined;
  if (!team) {
    io.stderr(`error: Team ${name} not found\n`);
    return undefined;
  }
  const spec = TeamSpec.safeParse(team.spec ?? {});
  if (!spec.success) {
    io.stderr(`error: Team ${name}: its spec does not read: ${spec.error.issues[0]?.message}\n`);
    return undefined;
  }
  return { team, spec: spec.data };
}

/** The TenantClusters of a Team's namespace: as listed, and those that read as the Team reads them. */
async function teamClusters(
  kube: KubeClient,
  team: string,
): Promise<{ raw: unknown[]; observed: ObservedCluster[] }> {
  const raw = await kube.list(butlerPath("tenantclusters", teamNamespace(team)));
  return {
    raw,
    observed: raw.flatMap((c) => {
      const parsed = ObservedCluster.safeParse(c);
      return parsed.success ? [parsed.data] : [];
    }),
  };
}

/** A NetworkPool by name (in `-n`, default butler-system); `undefined` once stderr says it is not there. */
async function readPool<T>(
  kube: KubeClient,
  name: string,
  values: Values,
  io: CliIo,
): Promise<T | undefined> {
  const namespace = values.namespace ?? "butler-system";
  const pool = await kube.get(butlerPath("networkpools", namespace, name)) as T | undefined;
  if (!pool) io.stderr(`error: NetworkPool ${namespace}/${name} not found\n`);
  return pool;
}

/**
 * Sends a write (a server-side dry run with `dryRun`); a refusal is said on stderr and resolves `false`. Any
 * other failure is thrown: it is not an answer about the request.
 */
async function send(
  kube: KubeClient,
  method: "POST" | "PUT",
  path: string,
  body: unknown,
  dryRun: boolean,
  io: CliIo,
): Promise<boolean> {
  try {
    await kube.write(method, dryRun ? `${path}?dryRun=All` : path, body);
    return true;
  } catch (err) {
    const refused = refusal(err);
    if (refused === undefined) throw err;
    io.stderr(`error: refused: ${refused}\n`);
    return false;
  }
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
    const items = await kube.list(butlerPath("tenantclusters", namespace), {
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

async function poolShow(names: readonly string[], values: Values, io: CliIo): Promise<number> {
  const output = outputOf(values, ["text", "json", "yaml", "svg"]);
  if (names.length !== 1) throw new UsageError("name one NetworkPool");
  const { kube } = connect(values, io);
  const pool = await readPool<PoolObject>(kube, names[0]!, values, io);
  if (!pool) return 1;
  let allocations: AllocationInfo[] = [];
  try {
    allocations = await kube.list(butlerPath("ipallocations")) as AllocationInfo[];
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
  const read = await readTeam(kube, name, io);
  if (!read) return 1;
  const { observed } = await teamClusters(kube, name);
  const providers = [];
  for (const ns of [teamNamespace(name), "butler-system"]) {
    try {
      for (const pc of await kube.list(butlerPath("providerconfigs", ns))) {
        const parsed = ProviderLimitsView.safeParse(pc);
        const pcName = (pc as { metadata?: { name?: string } }).metadata?.name;
        if (parsed.success && pcName) providers.push(teamProvider(`${ns}/${pcName}`, parsed.data));
      }
    } catch (err) {
      io.stderr(
        `warning: ProviderConfigs in ${ns} not listed, their per-team limits not shown (${
          err instanceof Error ? err.message : err
        })\n`,
      );
    }
  }
  const usage = computeUsage(read.spec, observed, providers);
  io.stdout(
    output === "text" ? renderUsageText(name, usage, io.paint) : structured(usageJson(name, usage), output),
  );
  return 0;
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
  const read = await readTeam(kube, values.team, io);
  if (!read) return 1;
  const clusters = await teamClusters(kube, values.team);
  if (verb === "list") {
    const rows = environmentRows(read.spec, computeUsage(read.spec, clusters.observed));
    io.stdout(
      output === "text"
        ? renderEnvironments(values.team, rows, io.paint)
        : structured({ team: values.team, environments: rows }, output),
    );
    return 0;
  }
  const env = names[0]!;
  const next = verb === "add"
    ? withEnvironment(read.team, {
      name: env,
      ...(values.description !== undefined ? { description: values.description } : {}),
      ...(maxClusters !== undefined ? { maxClusters } : {}),
      ...(perMember !== undefined ? { maxClustersPerMember: perMember } : {}),
    })
    : withoutEnvironment(read.team, env, clusters.raw);
  if (!next.ok) {
    io.stderr(`error: ${next.message}\n`);
    return 1;
  }
  const dryRun = values["dry-run"] ?? false;
  if (!await send(kube, "PUT", butlerPath("teams", undefined, values.team), next.team, dryRun, io)) return 1;
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
  const read = await readTeam(kube, values.team, io);
  if (!read) return 1;
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
  const defaultName = read.spec.providerConfigRef?.name;
  for (
    const ns of defaultName && values.provider === undefined
      ? [teamNamespace(values.team), "butler-system"]
      : []
  ) {
    try {
      const pc = await kube.get(butlerPath("providerconfigs", ns, defaultName));
      if (pc) found.add(`${ns}/${defaultName}`);
    } catch { /* not readable here: looked for where the controller would find it last */ }
  }
  const rows = preview(request, read.spec, (ref) => found.has(`${ref.namespace}/${ref.name}`));
  const object = clusterObject(request);
  const dryRun = values["dry-run"] ?? false;
  if (output === "text") io.stdout(renderPreview(request, rows));
  const sent = await send(
    kube,
    "POST",
    butlerPath("tenantclusters", teamNamespace(values.team)),
    object,
    dryRun,
    io,
  );
  if (!sent) {
    if (output !== "text") {
      io.stdout(structured({ dryRun, cluster: object, preview: rows, created: false }, output));
    }
    return 1;
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
    const pool = await readPool<LedgerSource>(connect(values, io).kube, names[0]!, values, io);
    if (!pool) return 1;
    sources = [pool];
  }
  const { out, errors } = ledgerReport(sources, values.v1 ? "v1" : output === "json" ? "json" : "table");
  io.stdout(out);
  for (const e of errors) io.stderr(`error: ${e}\n`);
  return errors.length ? 1 : 0;
}

/** Every command by its words. */
export const COMMANDS: Readonly<Record<string, Command>> = {
  "env migrate": envMigrate,
  "env list": (names, values, io) => envEdit("list", names, values, io),
  "env add": (names, values, io) => envEdit("add", names, values, io),
  "env remove": (names, values, io) => envEdit("remove", names, values, io),
  "cluster create": clusterCreate,
  "pool show": poolShow,
  "team usage": teamUsage,
};

/** `version`: this plugin's release (deno.json's), as text or `{"version": ...}`; it reads no cluster. */
function version(names: readonly string[], values: Values, io: CliIo): Promise<number> {
  if (names.length) throw new UsageError("version takes no arguments");
  const output = outputOf(values, ["text", "json", "yaml"]);
  io.stdout(output === "text" ? `${io.name} ${VERSION}\n` : structured({ version: VERSION }, output));
  return Promise.resolve(0);
}

/** Commands of one word, whose next word is an argument. */
export const ONE_WORD_COMMANDS: Readonly<Record<string, Command>> = { ledger, version, adopt };
