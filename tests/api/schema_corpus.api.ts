/**
 * `plan`'s in-process schema, pruning, defaulting and CEL judge against the real API server, object by object,
 * over a corpus of more than 1,000 (tests/schema/corpus.ts): every example, and mutations of every valid one.
 * Each is created as a server-side dry run with strict field validation (what `kubectl apply` sends); the
 * verdicts must agree on every object and the words on at least 99 % of them. The differences are printed and
 * written, with the counts, to `$SCHEMA_CORPUS_JSON` (default: `schema-corpus.json` in the test cluster's directory).
 */
import assert from "node:assert/strict";
import { readInstall } from "../../lib/plan/mod.ts";
import { crdKinds, judge, type KindSchema, type SchemaVerdict } from "../../lib/schema/mod.ts";
import { corpus, type CorpusCase } from "../schema/corpus.ts";
import { api, cluster, ensureNamespaces, installManifests, ROOT } from "./cluster.ts";

/** The API server's verdict in the plan's terms: admitted by the schema, or refused with these words. */
interface ServerVerdict {
  readonly refused: boolean;
  /** The causes of a 422 (`field: message`), or the message of another refusal. */
  readonly words: readonly string[];
  readonly status: number;
}

function pathOf(kind: KindSchema, namespace: string | undefined): string {
  const base = `/apis/${kind.group}/${kind.version}`;
  return `${base}${
    kind.namespaced ? `/namespaces/${namespace}` : ""
  }/${kind.plural}?dryRun=All&fieldValidation=Strict`;
}

async function serverVerdict(c: CorpusCase, kinds: ReadonlyMap<string, KindSchema>): Promise<ServerVerdict> {
  const kind = [...kinds.values()].find((k) =>
    k.kind === c.object.kind && c.object.apiVersion === `${k.group}/${k.version}`
  );
  const fallback = [...kinds.values()].find((k) => k.kind === c.object.kind)!;
  const path = kind
    ? pathOf(kind, c.object.metadata.namespace)
    : pathOf({ ...fallback, version: c.object.apiVersion.split("/")[1]! }, c.object.metadata.namespace);
  // A version the API server does not serve answers a plain-text 404 ("404 page not found").
  const res = await api("POST", path, c.object).catch(() => ({ status: 404, body: {} }));
  const body = res.body as {
    message?: string;
    reason?: string;
    details?: { causes?: { field?: string; message?: string }[] };
  };
  // Admission policies run after the schema: their refusal means the schema admitted the object.
  const byPolicy = res.status === 403 ||
    /ValidatingAdmissionPolicy|admission webhook/.test(body.message ?? "");
  if (res.status < 300 || byPolicy) return { refused: false, words: [], status: res.status };
  if (res.status === 404) return { refused: true, words: ["no matches for kind"], status: 404 };
  const causes = res.status === 422
    ? (body.details?.causes ?? []).map((x) => `${x.field}: ${x.message}`)
    : [];
  return { refused: true, words: causes.length ? causes : [body.message ?? ""], status: res.status };
}

/** The plan's words in the server's shape: the causes of an invalid object, else the message. */
function planWords(v: SchemaVerdict): string[] {
  if (v.ok) return [];
  if (v.causes) return [...v.causes];
  const invalid = /^The \S+ "[^"]*" is invalid: (.*)$/s.exec(v.message);
  return [invalid ? invalid[1]! : v.message];
}

function sameWords(plan: readonly string[], server: ServerVerdict): boolean {
  if (server.status === 404) return plan.length === 1 && plan[0]!.startsWith("no matches for kind");
  return JSON.stringify([...plan].sort()) === JSON.stringify([...server.words].sort());
}

Deno.test("plan's schema judge and the API server agree over the corpus", async (t) => {
  await installManifests();
  const kinds = crdKinds(readInstall(`${ROOT}/`));
  const cases = corpus(`${ROOT}/`);
  assert.ok(cases.length >= 1000, `the corpus holds ${cases.length} objects`);
  await ensureNamespaces([...new Set(cases.flatMap((c) => c.object.metadata.namespace ?? []))]);

  const verdictDiffs: string[] = [];
  const wordDiffs: string[] = [];
  let refused = 0;
  const queue = [...cases];
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const server = await serverVerdict(c, kinds);
      const plan = judge(kinds, c.object);
      if (server.refused) refused++;
      const line = `${c.name}\n    plan:   ${planWords(plan).join(" | ") || "admitted"}\n    server: ${
        server.words.join(" | ") || "admitted"
      } (${server.status})`;
      if (server.refused === plan.ok) verdictDiffs.push(line);
      else if (server.refused && !sameWords(planWords(plan), server)) wordDiffs.push(line);
    }
  }));
  const report = {
    objects: cases.length,
    refusedByServer: refused,
    sameVerdict: cases.length - verdictDiffs.length,
    sameWords: cases.length - verdictDiffs.length - wordDiffs.length,
    verdictDiffs: verdictDiffs.sort(),
    wordDiffs: wordDiffs.sort(),
  };
  const out = Deno.env.get("SCHEMA_CORPUS_JSON") ?? `${cluster().dir}/schema-corpus.json`;
  Deno.writeTextFileSync(out, JSON.stringify(report, null, 2));
  console.log(
    `corpus: ${report.objects} objects, ${refused} refused by the API server; same verdict ${report.sameVerdict}, same words ${report.sameWords}`,
  );

  await t.step("the same verdict on every object", () => {
    assert.deepEqual(report.verdictDiffs, []);
  });
  await t.step("the same words on at least 99 % of them", () => {
    assert.ok(report.sameWords >= 0.99 * report.objects, report.wordDiffs.slice(0, 40).join("\n"));
  });
});
