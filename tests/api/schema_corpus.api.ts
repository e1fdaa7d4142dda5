/**
 * `plan`'s in-process judges against the real API server, object by object, over a corpus of more than 1,000
 * (tests/schema/corpus.ts): every example, and mutations of every valid one. Each is created as a server-side
 * dry run with strict field validation (what `kubectl apply` sends), as the test's admin (a platform admin, as
 * `plan` assumes); the plan's side is the schema judge, then the shipped policies' CEL. The verdicts must agree
 * on every object and the words on at least 99 % of them. The differences are printed and written, with the
 * counts, to `$SCHEMA_CORPUS_JSON` (default: `schema-corpus.json` in the test cluster's directory).
 */
import assert from "node:assert/strict";
import { currentWords } from "../../lib/plan/mod.ts";
import { judge, type KindSchema, type ManifestObject } from "../../lib/schema/mod.ts";
import { corpus, type CorpusCase } from "../schema/corpus.ts";
import { KINDS, platformAdminDenial } from "../schema/policies.ts";
import { api, cluster, ensureNamespaces, installManifests, ROOT } from "./cluster.ts";

/** A verdict in common terms: admitted, or refused by whom with these words. */
interface Verdict {
  readonly refused: "no" | "schema" | "policy";
  /** The causes of a schema refusal (`field: message`), or the message of another refusal. */
  readonly words: readonly string[];
}

function kindFor(o: ManifestObject): KindSchema {
  const fallback = [...KINDS.values()].find((k) => k.kind === o.kind)!;
  return KINDS.get(`${o.apiVersion}/${o.kind}`) ?? { ...fallback, version: o.apiVersion.split("/")[1]! };
}

async function serverVerdict(c: CorpusCase): Promise<Verdict & { status: number }> {
  const kind = kindFor(c.object);
  const scope = kind.namespaced ? `/namespaces/${c.object.metadata.namespace}` : "";
  const path = `/apis/${kind.group}/${kind.version}${scope}/${kind.plural}?dryRun=All&fieldValidation=Strict`;
  // A version the API server does not serve answers a plain-text 404 ("404 page not found").
  const res = await api("POST", path, c.object).catch(() => ({ status: 404, body: {} }));
  const body = res.body as {
    message?: string;
    details?: { causes?: { field?: string; message?: string }[] };
  };
  const message = body.message ?? "";
  const at = (refused: Verdict["refused"], words: readonly string[]) => ({
    refused,
    words,
    status: res.status,
  });
  // Storage runs after validation and admission: an object of that name stored by another test (409) passed both.
  if (res.status < 300 || res.status === 409) return at("no", []);
  if (/ValidatingAdmissionPolicy '/.test(message)) {
    return at("policy", [message.slice(message.indexOf("ValidatingAdmissionPolicy '"))]);
  }
  if (res.status === 404) return at("schema", ["no matches for kind"]);
  const causes = res.status === 422
    ? (body.details?.causes ?? []).map((x) => `${x.field}: ${x.message}`)
    : [];
  // In current words: Kubernetes 1.30 prints a CEL failure's value as its type, and null as "null".
  return at("schema", (causes.length ? causes : [message]).map((w) => currentWords(w, c.object)));
}

/** The plan's verdict: the schema judge, then the shipped policies as a platform admin. */
function planVerdict(c: CorpusCase): Verdict {
  const v = judge(KINDS, c.object);
  if (!v.ok) {
    const invalid = /^The \S+ "[^"]*" is invalid: (.*)$/s.exec(v.message);
    return { refused: "schema", words: v.causes ? [...v.causes] : [invalid ? invalid[1]! : v.message] };
  }
  const denial = platformAdminDenial(v.object, kindFor(c.object));
  if (denial) {
    const words =
      `ValidatingAdmissionPolicy '${denial.policy}' with binding '${denial.binding}' denied request: ${denial.message}`;
    return { refused: "policy", words: [words] };
  }
  return { refused: "no", words: [] };
}

function sameWords(plan: Verdict, server: Verdict & { status: number }): boolean {
  if (server.status === 404) {
    return plan.words.length === 1 && plan.words[0]!.startsWith("no matches for kind");
  }
  if (server.refused === "policy") return server.words[0] === plan.words[0];
  return JSON.stringify([...plan.words].sort()) === JSON.stringify([...server.words].sort());
}

Deno.test("plan's schema and policy judges and the API server agree over the corpus", async (t) => {
  await installManifests();
  const cases = corpus(`${ROOT}/`);
  assert.ok(cases.length >= 1000, `the corpus holds ${cases.length} objects`);
  await ensureNamespaces([...new Set(cases.flatMap((c) => c.object.metadata.namespace ?? []))]);

  const verdictDiffs: string[] = [];
  const wordDiffs: string[] = [];
  const byServer = { schema: 0, policy: 0, no: 0 };
  const queue = [...cases];
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const server = await serverVerdict(c);
      const plan = planVerdict(c);
      byServer[server.refused]++;
      const line = `${c.name}\n    plan:   ${plan.refused} ${
        plan.words.join(" | ")
      }\n    server: ${server.refused} ${server.words.join(" | ")} (${server.status})`;
      if (server.refused !== plan.refused) verdictDiffs.push(line);
      else if (server.refused !== "no" && !sameWords(plan, server)) wordDiffs.push(line);
    }
  }));
  const report = {
    objects: cases.length,
    refusedBySchema: byServer.schema,
    refusedByPolicy: byServer.policy,
    admitted: byServer.no,
    sameVerdict: cases.length - verdictDiffs.length,
    sameWords: cases.length - verdictDiffs.length - wordDiffs.length,
    verdictDiffs: verdictDiffs.sort(),
    wordDiffs: wordDiffs.sort(),
  };
  const out = Deno.env.get("SCHEMA_CORPUS_JSON") ?? `${cluster().dir}/schema-corpus.json`;
  Deno.writeTextFileSync(out, JSON.stringify(report, null, 2));
  console.log(
    `corpus: ${report.objects} objects (API server: ${byServer.schema} refused by a schema, ${byServer.policy} by a policy, ${byServer.no} admitted); same verdict ${report.sameVerdict}, same words ${report.sameWords}`,
  );

  await t.step("the same verdict on every object", () => {
    assert.deepEqual(report.verdictDiffs, []);
  });
  await t.step("the same words on at least 99 % of them", () => {
    assert.ok(report.sameWords >= 0.99 * report.objects, report.wordDiffs.slice(0, 40).join("\n"));
  });
});
