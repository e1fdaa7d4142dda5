/**
 * What every GitHub Actions workflow this project ships under `examples/ci/` must hold, as GitHub's security
 * hardening guide and OpenSSF's Scorecard (Pinned-Dependencies, Token-Permissions) ask, since a copy runs with
 * `packages: write`, `id-token: write` or `contents: write`:
 *
 * - every action is pinned by a full commit SHA (a tag can be moved to other code), with its release tag as the
 *   line's comment so a reader and a bump tool know the version; a local action (`./…`) and a `docker://` image
 *   by digest are pinned by what they are;
 * - every `actions/checkout` sets `persist-credentials: false` (otherwise the job's token stays in `.git/config`
 *   for every later step), unless it is `true` with a comment on that line saying what pushes with it;
 * - every `run` step's shell fails on a failed command and on a failed pipeline (`bash`, which GitHub runs as
 *   `bash --noprofile --norc -eo pipefail {0}`, or a `bash … -e… -o pipefail … {0}` of one's own; the shell
 *   GitHub picks when none is named is `bash -e {0}`, without pipefail).
 *
 * @module
 */
import { isMap, isScalar, parseDocument, type Scalar } from "yaml";

/** The root of this repository. */
const ROOT = new URL("../../", import.meta.url).pathname;

/** A full commit SHA after the `@`; a local action; a container image by digest. */
const PINNED = [
  /^[\w.-]+\/[\w.-]+(?:\/[^@\s]+)?@[0-9a-f]{40}$/,
  /^\.\//,
  /^docker:\/\/[^@\s]+@sha256:[0-9a-f]{64}$/,
];

/** The comment a pinned action carries: the release tag its SHA is. */
const VERSION_COMMENT = /^ ?v\d+\.\d+\.\d+$/;

/**
 * Whether a step shell fails the step on a failed command and on a failed pipeline. GitHub runs the shell
 * `bash` as `bash --noprofile --norc -eo pipefail {0}`; a command string of one's own needs both flags.
 */
export function failsOnPipeline(shell: string | undefined): boolean {
  if (shell === "bash") return true;
  return shell !== undefined && /^bash\s/.test(shell) && /\s-[a-z]*e/.test(shell) &&
    /\s-[a-z]*o pipefail\b/.test(shell) && /\{0\}/.test(shell);
}

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

/**
 * What a workflow breaks of the rules above, one line each (`job step: problem`); none when it holds them.
 *
 * @example
 * ```ts
 * workflowFindings("on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: actions/checkout@v4\n");
 * // ["a step 1: actions/checkout@v4 is not pinned by a full commit SHA", ...]
 * ```
 */
export function workflowFindings(text: string): string[] {
  const doc = parseDocument(text);
  const workflow = doc.toJS() as Obj;
  const findings: string[] = [];
  const pin = (where: string, path: (string | number)[]) => {
    const node = doc.getIn(path, true) as Scalar | undefined;
    const uses = String(node?.value ?? "");
    if (!PINNED.some((p) => p.test(uses))) {
      findings.push(`${where}: ${uses} is not pinned by a full commit SHA`);
    } else if (
      !uses.startsWith("./") && !uses.startsWith("docker://") && !VERSION_COMMENT.test(node?.comment ?? "")
    ) {
      findings.push(`${where}: ${uses} has no "# vX.Y.Z" comment naming its release tag`);
    }
  };
  for (const [id, job] of Object.entries((workflow?.jobs ?? {}) as Record<string, Obj>)) {
    if (job.uses !== undefined) pin(id, ["jobs", id, "uses"]);
    const steps = (job.steps ?? []) as Obj[];
    steps.forEach((step, i) => {
      const where = `${id} step ${i + 1}${step.name ? ` (${step.name})` : ""}`;
      if (step.uses !== undefined) pin(where, ["jobs", id, "steps", i, "uses"]);
      if (String(step.uses ?? "").startsWith("actions/checkout@")) {
        const persist = doc.getIn(["jobs", id, "steps", i, "with", "persist-credentials"], true);
        const value = isScalar(persist) ? persist.value : undefined;
        const said = isScalar(persist) && (persist.comment ?? "").trim() !== "";
        if (value !== false && !(value === true && said)) {
          findings.push(
            `${where}: actions/checkout keeps the token in .git/config: set persist-credentials: false ` +
              "(or true with a comment saying what pushes with it)",
          );
        }
      }
      if (step.run !== undefined) {
        const shell = step.shell ?? job.defaults?.run?.shell ?? workflow.defaults?.run?.shell;
        if (!failsOnPipeline(shell)) {
          findings.push(
            `${where}: runs with the shell ${
              shell === undefined ? "GitHub picks (bash -e {0})" : JSON.stringify(shell)
            }, which does not fail on a failed pipeline: name shell: bash (or defaults: run: shell: bash)`,
          );
        }
      }
    });
  }
  if (!isMap(doc.contents) || workflow?.jobs === undefined) findings.push("no jobs: not a workflow");
  return findings;
}

/** The workflows under `examples/ci/` (every `.github/workflows/*.y(a)ml`), relative to the repository's root. */
export function exampleWorkflows(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(`${ROOT}${dir}`)) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory) walk(path);
      else if (/\.github\/workflows\/[^/]+\.ya?ml$/.test(path)) found.push(path);
    }
  };
  walk("examples/ci");
  return found.sort();
}

/** A file of this repository, by its path from the root. */
export function readRepoFile(path: string): string {
  return Deno.readTextFileSync(`${ROOT}${path}`);
}
