/**
 * Every example converges Ready in `plan`, with the objects it says it goes with: each file under `examples/`
 * (but `examples/invalid/`, which must be refused) names them in a `# Goes with:` line (paths from the repository
 * root, files or folders), and a folder of `examples/ipam/` is one setup. Planned together, nothing is refused, no
 * sync fails, the controllers converge, and every Butler object (the example's, its companions' and their
 * children) reports `Ready=True`: an example that only works with objects it does not name, or never becomes
 * Ready, fails here.
 */
import assert from "node:assert/strict";
import { GROUP } from "../../lib/butler/mod.ts";
import {
  EXIT,
  exitCode,
  groupOf,
  manifestFiles,
  type Obj,
  UNKNOWN_KIND_NOTE,
  verdictOf,
} from "../../lib/plan/mod.ts";
import { examples, plan, ROOT } from "./helpers.ts";

/**
 * Examples of kinds `plan` does not run (Cluster API's, served by `components/cluster-api-ipam`, which the plan's
 * install leaves out): they must be skipped with this note, and the real controller tier runs them.
 */
const PLANNED_ELSEWHERE: Record<string, string> = {
  // Cluster API's kinds are served by its CRDs, which only --live brings (kubectl get crd -o yaml): without them
  // kubectl refuses the kind, as plan does (the real API server tier plans and stores it with them).
  "examples/cluster-api/ipaddressclaim.yaml": UNKNOWN_KIND_NOTE,
};

/** Every example file (relative to the repository root) and the paths it says it goes with. */
export function exampleSets(): { file: string; with: string[] }[] {
  return manifestFiles(`${ROOT}examples`).map((path) => path.slice(ROOT.length))
    .filter((file) => !file.startsWith("examples/invalid/"))
    .map((file) => {
      const line = /^# Goes with: (.+)$/m.exec(Deno.readTextFileSync(`${ROOT}${file}`))?.[1];
      return { file, with: line ? line.trim().split(/\s+/) : [] };
    });
}

const readyOf = (o: Obj) =>
  (Array.isArray(o.status?.conditions) ? o.status.conditions : []).find((c: { type?: string }) =>
    c.type === "Ready"
  ) as { status?: string; reason?: string; message?: string } | undefined;

Deno.test("every example converges Ready in plan with the objects it says it goes with", async (t) => {
  const sets = exampleSets();
  assert.ok(sets.length >= 36, `${sets.length} examples`);
  for (const set of sets) {
    await t.step(set.file, async () => {
      for (const p of set.with) {
        assert.ok(exists(`${ROOT}${p}`), `${set.file} goes with ${p}, which does not exist`);
      }
      const files = [
        ...new Set([...set.with.flatMap((p) => manifestFiles(`${ROOT}${p}`)), `${ROOT}${set.file}`]),
      ];
      const result = await plan(examples(...files.map((f) => f.slice(`${ROOT}examples/`.length))));
      const elsewhere = PLANNED_ELSEWHERE[set.file];
      if (elsewhere) {
        const own = result.outcomes.filter((o) => o.source.startsWith(`${set.file}#`));
        assert.deepEqual(own.map((o) => [o.action, o.note]), [["refused", elsewhere]]);
      }
      const problems = [
        ...result.outcomes.filter((o) => o.action === "refused" && !(elsewhere && o.note === elsewhere))
          .map((o) => `${o.name} refused: ${o.refusal?.message}`),
        ...result.outcomes.filter((o) => o.action === "skipped" && !elsewhere)
          .map((o) => `${o.name} skipped: ${o.note}`),
        ...result.failures.map((f) => `${f.name}: sync fails: ${f.message}`),
        ...(result.converged ? [] : ["the controllers do not converge"]),
        ...result.objects.filter((o) => groupOf(o.apiVersion) === GROUP)
          .flatMap((o) => {
            const ready = readyOf(o);
            return ready?.status === "True" ? [] : [
              `${o.kind} ${
                o.metadata.namespace ?? ""
              }/${o.metadata.name}: Ready=${ready?.status} (${ready?.reason}): ${ready?.message}`,
            ];
          }),
      ];
      assert.deepEqual(problems, []);
      // A kind only --live can bring is refused as kubectl does (1); everything else converges Ready (0).
      assert.equal(exitCode(verdictOf(result), "not-ready"), elsewhere ? EXIT.refused : EXIT.ok);
    });
  }
});

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("the README's walk-through: what it plans is what it applies, Ready, and its waits name every object", async () => {
  const readme = Deno.readTextFileSync(`${ROOT}README.md`);
  const planned = /^npx -y deno@2\.9\.6 task plan (.+)$/m.exec(readme)?.[1]?.split(/\s+/);
  const block = /<!-- test:e2e runs this block -->\s*```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(planned && block, "the README plans a setup, then applies it in a block test:e2e runs");
  const applied = [...block.matchAll(/-f (\S+)/g)].map((m) => m[1]!.replace(/\/$/, ""));
  assert.deepEqual(applied.sort(), [...planned].sort(), "the walk-through applies what it planned");
  const result = await plan(examples(...planned.map((p) => p.replace(/^examples\//, ""))));
  assert.equal(exitCode(verdictOf(result), "not-ready"), EXIT.ok, "plan exits 0");
  // Every Butler object the files hold is waited for, by kind and name (the IPAllocations come with the cluster).
  const waited = new Set(
    [...block.matchAll(/wait --for=condition=Ready [^\n]*/g)].flatMap((m) =>
      [...m[0].matchAll(/(\w+)\/([\w-]+)/g)].map((w) => `${w[1]}/${w[2]}`)
    ),
  );
  const butler = result.objects.filter((x) => groupOf(x.apiVersion) === GROUP && x.kind !== "IPAllocation");
  assert.ok(butler.length >= 4, `${butler.length} Butler objects`);
  for (const o of butler) {
    assert.ok(
      waited.has(`${o.kind.toLowerCase()}/${o.metadata.name}`),
      `${o.kind} ${o.metadata.name} is waited for`,
    );
    assert.equal(readyOf(o)?.status, "True", `${o.kind} ${o.metadata.name} Ready`);
  }
});
