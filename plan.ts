/**
 * `main.ts plan`: what the API server, admission and the controllers will do with a folder of manifests, offline.
 * Reads the files, runs {@linkcode runPlan} (which judges Butler's kinds against the install's CRDs in process)
 * and prints the result; kubectl-validate, when installed, checks the core and RBAC kinds and gives a second
 * opinion on Butler's. Exit codes: 0 everything admitted, converged and Ready (or waiting only on objects of a kind
 * the plan was given none of); 1 something refused; 3 admitted but not Ready, failing or not converging; 2 a
 * document that cannot be read (the rest is planned) or bad usage (`--fail-on` chooses what fails).
 *
 * @module
 */
import { HOOK_ROUTES } from "./hooks/mod.ts";
import { GROUP } from "./lib/butler/mod.ts";
import { DecodeBudget } from "./lib/kubectl_yaml/mod.ts";
import { escapeControl } from "./lib/safe_text/mod.ts";
import { formatTime, parseTime } from "./lib/time/mod.ts";
import {
  EXIT,
  exitCode,
  type FailOn,
  groupOf,
  invalidMessage,
  type InvalidStatus,
  type Obj,
  type Outcome,
  parseManifests,
  readInputFiles,
  readInstall,
  type Refusal,
  renderDiff,
  renderObjects,
  renderText,
  resultLine,
  runPlan,
  type SourcedObject,
  type Unreadable,
  verdictOf,
  withoutServerFields,
} from "./lib/plan/mod.ts";

const USAGE = `usage: main.ts plan [options] <dir|file|->...
  reads YAML or JSON manifests (directories recursively, - for standard input) and prints what admission and
  the controllers will do with them
options:
  --live FILE          objects the cluster holds already (kubectl get -o yaml); may be repeated
  --output FORMAT      text (default), yaml or json (the resulting objects as a List, and in its refused
                       list each refused input: source, line, by, message and the object as written)
  --diff               print what changes against the --live objects
  --now TIME           the instant the hooks see, RFC 3339 (default: the current time)
  --namespace NAME     namespace of namespaced objects that name none (default: default)
  --fail-on WHAT       what fails the run: not-ready (default: a refusal exits 1, anything not Ready, a failing
                       sync or no fixed point exits 3), refused (only a refusal, exit 1) or none (exit 0)
exit codes: 0 admitted and Ready (or waiting only on objects of a kind the input and --live hold none of),
  1 refused, 2 a document that cannot be read (the others are planned) or bad usage, 3 not Ready or not converging
environment:
  KUBECTL_VALIDATE     path of kubectl-validate (default: kubectl-validate on PATH). Optional: Butler's kinds
                       are checked in process against the CRDs; kubectl-validate adds the core and RBAC kinds'
                       schemas and a second opinion on Butler's`;

const ROOT = new URL(".", import.meta.url).pathname;
/** The API groups kubectl-validate checks: the core, RBAC and ours (a GitOps folder's other kinds are skipped). */
const VALIDATED_GROUPS = new Set(["", "rbac.authorization.k8s.io", GROUP]);

interface Args {
  paths: string[];
  live: string[];
  output: "text" | "yaml" | "json";
  diff: boolean;
  now?: string;
  namespace: string;
  failOn: FailOn;
}

const FAIL_ON: readonly FailOn[] = ["refused", "not-ready", "none"];

function usage(message: string): never {
  console.error(`plan: ${message}\n${USAGE}`);
  Deno.exit(EXIT.unreadable);
}

/** An input error: said alone (the usage is not the problem), exit 2. */
function inputError(message: string): never {
  console.error(`plan: ${message.split("\n").map(escapeControl).join("\n")}`);
  Deno.exit(EXIT.unreadable);
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = {
    paths: [],
    live: [],
    output: "text",
    diff: false,
    namespace: "default",
    failOn: "not-ready",
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const [flag, inline] = a.startsWith("--") && a.includes("=")
      ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
      : [a, undefined];
    const value = () => inline ?? argv[++i] ?? usage(`${flag} needs a value`);
    if (flag === "--live") args.live.push(value());
    else if (flag === "--output" || flag === "-o") {
      const v = value();
      if (v !== "text" && v !== "yaml" && v !== "json") {
        usage(`--output must be text, yaml or json, not ${JSON.stringify(v)}`);
      }
      args.output = v;
    } else if (flag === "--diff") args.diff = true;
    else if (flag === "--now") args.now = value();
    else if (flag === "--namespace" || flag === "-n") args.namespace = value();
    else if (flag === "--fail-on") {
      const v = value();
      if (!FAIL_ON.includes(v as FailOn)) {
        usage(`--fail-on must be refused, not-ready or none, not ${JSON.stringify(v)}`);
      }
      args.failOn = v as FailOn;
    } else if (flag === "--help" || flag === "-h") {
      console.log(USAGE);
      Deno.exit(0);
    } else if (flag.startsWith("-") && flag !== "-") usage(`unknown option ${flag}`);
    else args.paths.push(a);
  }
  if (!args.paths.length) usage("no manifests given");
  return args;
}

/** What one run reads and decodes, over its inputs and `--live`: bounded as a whole. */
const spent = { bytes: 0 };
const budget = new DecodeBudget();

/** The objects of the files below `paths`, and the documents (and files) kubectl could not read. */
async function read(
  paths: readonly string[],
): Promise<{ objects: SourcedObject[]; unreadable: Unreadable[] }> {
  const objects: SourcedObject[] = [];
  const unreadable: Unreadable[] = [];
  for (const path of paths) {
    let files;
    try {
      files = await readInputFiles([path], spent);
    } catch (err) {
      inputError(`cannot read ${path}: ${err instanceof Error ? err.message : err}`);
    }
    for (const file of files) {
      const source = file.path === "-" ? "(stdin)" : file.path;
      if (file.text === undefined) {
        unreadable.push({ source, line: 0, message: file.problem ?? "not read" });
        continue;
      }
      const parsed = parseManifests(file.text, source, budget);
      objects.push(...parsed.objects);
      unreadable.push(...parsed.unreadable);
    }
  }
  return { objects, unreadable };
}

/** What kubectl-validate said of the input: its refusals by index, or why it did not run. */
type SecondOpinion =
  | { readonly ran: true; readonly refusals: Map<number, Omit<Refusal, "by">> }
  | { readonly ran: false; readonly why: "not found" | "nothing to check" };

/** kubectl-validate's refusals of the input (CRD schemas and CEL), by index, or why it did not run. */
async function schemaRefusals(
  objects: readonly SourcedObject[],
  kinds: (o: Obj) => boolean,
): Promise<SecondOpinion> {
  const bin = Deno.env.get("KUBECTL_VALIDATE") ?? "kubectl-validate";
  const indexes = objects.flatMap((o, i) => (kinds(o.object) ? [i] : []));
  if (!indexes.length) {
    // Whether it is installed decides what the line says; it is not run with nothing to check.
    return { ran: false, why: await startable(bin) ? "nothing to check" : "not found" };
  }
  const dir = Deno.makeTempDirSync({ prefix: "butler-plan-" });
  try {
    for (const i of indexes) {
      Deno.writeTextFileSync(`${dir}/${String(i).padStart(6, "0")}.json`, JSON.stringify(objects[i]!.object));
    }
    let out: Deno.CommandOutput;
    try {
      out = await new Deno.Command(bin, {
        args: [dir, "--local-crds", `${ROOT}manifests/crds`, "--output", "json"],
        stdout: "piped",
        stderr: "piped",
      }).output();
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return { ran: false, why: "not found" };
      throw err;
    }
    const text = new TextDecoder().decode(out.stdout);
    if (!text.trim().startsWith("{")) {
      throw new Error(`kubectl-validate failed: ${new TextDecoder().decode(out.stderr)}`);
    }
    const results = JSON.parse(text) as Record<string, (InvalidStatus & { status: string })[]>;
    const refusals = new Map<number, Omit<Refusal, "by">>();
    for (const [file, rs] of Object.entries(results)) {
      const failed = rs.find((r) => r.status !== "Success");
      const index = Number(/(\d+)\.json$/.exec(file)?.[1]);
      if (failed && Number.isInteger(index)) {
        refusals.set(index, invalidMessage(failed, objects[index]?.object));
      }
    }
    return { ran: true, refusals };
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

/** Whether a program can be started (`--help`), without running it on anything. */
async function startable(bin: string): Promise<boolean> {
  try {
    await new Deno.Command(bin, { args: ["--help"], stdout: "null", stderr: "null" }).output();
    return true;
  } catch {
    return false;
  }
}

/** The objects kubectl-validate and the plan disagree on: refused by one, admitted by the other. */
function secondOpinion(
  external: ReadonlyMap<number, Omit<Refusal, "by">>,
  desired: readonly SourcedObject[],
  outcomes: readonly Outcome[],
): string[] {
  const bySource = new Map(outcomes.map((o) => [o.source, o]));
  return desired.flatMap((d, i) => {
    if (groupOf(d.object.apiVersion) !== GROUP) return [];
    const ours = bySource.get(d.source);
    const theirs = external.get(i);
    const oursRefused = ours?.action === "refused" && ours.refusal?.by === "schema";
    if (!ours || oursRefused === (theirs !== undefined)) return [];
    return [`${d.source}: kubectl-validate ${theirs ? `refuses it: ${theirs.message}` : "admits it"}`];
  });
}

// Through main.ts the first argument is the command itself.
const args = parseArgs(import.meta.main ? Deno.args : Deno.args.slice(1));
const now = args.now === undefined ? formatTime(new Date()) : (() => {
  const t = parseTime(args.now!);
  return t ? formatTime(t) : usage(`--now must be an RFC 3339 time, not ${JSON.stringify(args.now)}`);
})();
const { objects: desired, unreadable } = await read(args.paths);
if (!desired.length && !unreadable.length) inputError(`no manifests found in ${args.paths.join(", ")}`);
const liveInput = await read(args.live);
if (liveInput.unreadable.length) {
  inputError(
    `unreadable --live documents:\n  ${
      liveInput.unreadable.map((u) => `${u.source}${u.line ? `, line ${u.line}` : ""}: ${u.message}`)
        .join("\n  ")
    }`,
  );
}
const live = liveInput.objects.map((o) => withoutServerFields(o.object));
// kubectl-validate compiles the CRDs for a few hundred milliseconds: it runs while the install is read.
const validating = schemaRefusals(desired, (o) => VALIDATED_GROUPS.has(groupOf(o.apiVersion)));
const installed = readInstall(ROOT);
const opinion = await validating;
const external = opinion.ran ? opinion.refusals : undefined;
const result = await runPlan({
  desired,
  live,
  now,
  install: installed,
  routes: HOOK_ROUTES,
  ...(external ? { schema: external } : {}),
  defaultNamespace: args.namespace,
  unreadable,
});
const disagreements = external ? secondOpinion(external, desired, result.outcomes) : [];
const notes = [
  `Schemas and CEL rules of Butler's kinds: checked in process against manifests/crds.`,
  !opinion.ran
    ? opinion.why === "not found"
      ? "Core and RBAC kinds: schemas not checked (kubectl-validate not found; optional)."
      : "Second opinion (kubectl-validate): not run (no object of the core, RBAC or Butler's kinds)."
    : disagreements.length
    ? `Second opinion (kubectl-validate): disagrees on ${disagreements.length} object(s):`
    : "Second opinion (kubectl-validate): agrees; core and RBAC kinds checked by it.",
  // One line each: the text output escapes every line, so a line break in a tenant's string stays in its line.
  ...disagreements.map((d) => `  ${d}`),
];
if (args.output === "text") console.log(renderText(result, notes).trimEnd());
else console.log(renderObjects(result, args.output).trimEnd());
if (args.diff) console.log(renderDiff(result).trimEnd());
const code = exitCode(verdictOf(result), args.failOn);
if (args.output !== "text" && code !== EXIT.ok) console.error(resultLine(verdictOf(result)));
Deno.exit(code);
