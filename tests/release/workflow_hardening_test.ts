/**
 * The example workflows under examples/ci/ pin every action by commit SHA, keep no token in .git/config and fail on
 * a failed pipeline (tests/release/workflow_hardening.ts says why); and the checker finds every way a workflow can
 * break those rules, generated from the workflows themselves.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseDocument, type Scalar } from "yaml";
import { exampleWorkflows, failsOnPipeline, readRepoFile, workflowFindings } from "./workflow_hardening.ts";

const WORKFLOWS = exampleWorkflows();
/** Each mutation is a parse and a check of a whole workflow: enough runs to reach every step of both. */
const RUNS = { numRuns: 60, seed: 57 };

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

/** Every step of a workflow, as its path in the document and the step. */
function steps(text: string): { path: (string | number)[]; step: Obj }[] {
  const jobs = (parseDocument(text).toJS() as Obj).jobs as Record<string, Obj>;
  return Object.entries(jobs).flatMap(([id, job]) =>
    ((job.steps ?? []) as Obj[]).map((step, i) => ({ path: ["jobs", id, "steps", i], step }))
  );
}

/** A workflow changed by `edit` on its document. */
function edited(text: string, edit: (doc: ReturnType<typeof parseDocument>) => void): string {
  const doc = parseDocument(text);
  edit(doc);
  return doc.toString();
}

const hex = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: min, maxLength: max });
/** Refs that are not a full commit SHA: tags, branches, short, long or upper-case hex. */
const movableRef = fc.oneof(
  fc.constantFrom("v4", "v4.2.2", "main", "master", "latest", "v0"),
  hex(1, 39),
  hex(41, 64),
  hex(40, 40).filter((h) => /[a-f]/.test(h)).map((h) => h.toUpperCase()),
);

Deno.test("the example workflows under examples/ci/", async (t) => {
  await t.step("are found (plan and release)", () => {
    assert.deepEqual(WORKFLOWS, [
      "examples/ci/.github/workflows/plan.yaml",
      "examples/ci/.github/workflows/release.yaml",
    ]);
  });
  await t.step("pin each action to one commit and one tag everywhere", () => {
    const pins = new Map<string, Set<string>>();
    for (const text of WORKFLOWS.map(readRepoFile)) {
      const doc = parseDocument(text);
      for (const { path, step } of steps(text)) {
        if (!step.uses) continue;
        const node = doc.getIn([...path, "uses"], true) as Scalar;
        const [action, sha] = String(node.value).split("@");
        pins.set(action!, (pins.get(action!) ?? new Set()).add(`${sha} #${node.comment}`));
      }
    }
    assert.deepEqual([...pins].filter(([, p]) => p.size !== 1), []);
  });
  for (const file of WORKFLOWS) {
    await t.step(`${file}: every action by commit SHA, no token kept, pipefail`, () => {
      assert.deepEqual(workflowFindings(readRepoFile(file)), []);
    });
  }
});

Deno.test("the workflow checker finds every way to break the rules", async (t) => {
  const texts = WORKFLOWS.map(readRepoFile);
  const pick = <T>(items: T[]) => fc.nat({ max: items.length - 1 }).map((i) => items[i]!);
  const withUses = texts.flatMap((text) =>
    steps(text).filter((s) => s.step.uses).map((s) => ({ text, path: [...s.path, "uses"] }))
  );
  const checkouts = texts.flatMap((text) =>
    steps(text).filter((s) => String(s.step.uses).startsWith("actions/checkout@")).map((s) => ({
      text,
      ...s,
    }))
  );
  const runs = texts.flatMap((text) => steps(text).filter((s) => s.step.run).map((s) => ({ text, ...s })));
  assert.ok(withUses.length >= 10 && checkouts.length >= 4 && runs.length >= 10, "the workflows are read");

  await t.step("an action by a tag, a branch or a partial SHA", () => {
    fc.assert(
      fc.property(pick(withUses), movableRef, ({ text, path }, ref) => {
        const changed = edited(text, (doc) => {
          const node = doc.getIn(path, true) as Scalar;
          node.value = `${String(node.value).split("@")[0]}@${ref}`;
        });
        assert.ok(workflowFindings(changed).some((f) => f.endsWith("is not pinned by a full commit SHA")));
      }),
      RUNS,
    );
  });
  await t.step("a SHA without its release tag as the line's comment", () => {
    fc.assert(
      fc.property(
        pick(withUses),
        fc.constantFrom(undefined, "", " v4", " latest", " main"),
        ({ text, path }, c) => {
          const changed = edited(text, (doc) => {
            (doc.getIn(path, true) as Scalar).comment = c;
          });
          assert.ok(workflowFindings(changed).some((f) => f.includes('has no "# vX.Y.Z" comment')));
        },
      ),
      RUNS,
    );
  });
  await t.step("a checkout that keeps the token", () => {
    fc.assert(
      fc.property(
        pick(checkouts),
        fc.constantFrom<unknown>(undefined, true, "false", "true", 0, null),
        ({ text, path }, value) => {
          const changed = edited(text, (doc) => {
            if (value === undefined) doc.deleteIn([...path, "with", "persist-credentials"]);
            else doc.setIn([...path, "with", "persist-credentials"], value);
          });
          assert.ok(workflowFindings(changed).some((f) => f.includes("persist-credentials: false")));
        },
      ),
      RUNS,
    );
    // true with a comment saying what pushes with it is the one way to keep it.
    const { text, path } = checkouts[0]!;
    const said = edited(text, (doc) => {
      doc.setIn([...path, "with", "persist-credentials"], true);
      (doc.getIn([...path, "with", "persist-credentials"], true) as Scalar).comment = " git push of the tag";
    });
    assert.deepEqual(workflowFindings(said), []);
  });
  await t.step("a run step whose shell goes on past a failed pipeline", () => {
    const bad = fc.constantFrom(
      "bash -e {0}",
      "bash --noprofile --norc -e {0}",
      "bash -o pipefail {0}",
      "sh",
      "sh -e {0}",
    );
    fc.assert(
      fc.property(pick(runs), bad, fc.boolean(), ({ text, path }, shell, onStep) => {
        const changed = edited(text, (doc) => {
          if (onStep) doc.setIn([...path, "shell"], shell);
          else doc.deleteIn(["defaults"]);
        });
        assert.ok(workflowFindings(changed).some((f) => f.includes("does not fail on a failed pipeline")));
      }),
      RUNS,
    );
  });
  await t.step("the shells that fail on a failed pipeline, and those that do not", () => {
    for (const s of ["bash", "bash --noprofile --norc -eo pipefail {0}", "bash -euo pipefail {0}"]) {
      assert.ok(failsOnPipeline(s), s);
    }
    for (
      const s of [
        undefined,
        "bash -e {0}",
        "bash {0}",
        "bash -o pipefail {0}",
        "sh",
        "pwsh",
        "bash -eo pipefail",
      ]
    ) {
      assert.ok(!failsOnPipeline(s), String(s));
    }
  });
  await t.step("local actions and images by digest are pinned; an image by tag is not", () => {
    const workflow = (uses: string) =>
      `on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ${uses}\n`;
    assert.deepEqual(workflowFindings(workflow("./.github/actions/build")), []);
    assert.deepEqual(workflowFindings(workflow(`docker://alpine@sha256:${"a".repeat(64)}`)), []);
    assert.match(workflowFindings(workflow("docker://alpine:3.20")).join("\n"), /is not pinned/);
    const reusable = "on: push\njobs:\n  a:\n    uses: org/repo/.github/workflows/x.yaml@main\n";
    assert.match(workflowFindings(reusable).join("\n"), /^a: org\/repo.*is not pinned/);
  });
});
