/**
 * `plan` and the real API server (and kubectl) over what a repository holds beyond our spec fields (issue #57):
 * metadata and formats from apimachinery's and kube-openapi's own validation test tables, read from the Go modules
 * the test control plane is built from, and generated cases; YAML forms and kinds read by kubectl itself. Objects
 * are created as server-side dry runs with strict field validation as the test's admin; files are given to
 * `kubectl create --dry-run=server --validate=strict`. The verdicts must agree on every case and the words on at
 * least 99 % (causes compared as sets; a name the API server generates is compared as the plan's). The counts and
 * the differences are written to `$META_CORPUS_JSON` (default: `meta-corpus.json` in the test cluster's directory).
 */
import assert from "node:assert/strict";
import {
  currentWords,
  installResources,
  KindCatalog,
  kubectlVerdict,
  parseManifests,
  prepared,
  readInstall,
  validationVerdict,
} from "../../lib/plan/mod.ts";
import {
  crdKinds,
  generatedName,
  judge,
  judgeMeta,
  type ManifestObject,
  NAME_RULES,
} from "../../lib/schema/mod.ts";
import { canonical, type Obj } from "../../lib/plan/store.ts";
import { quote } from "../../lib/gostd/mod.ts";
import { goStringLiterals } from "../schema/go_literals.ts";
import {
  type ApiCase,
  CORPUS_NAMESPACE,
  formatCases,
  generatedMetadataCases,
  metadataValueCases,
  yamlCases,
} from "../schema/meta_corpus.ts";
import { platformAdminDenial } from "../schema/policies.ts";
import { api, cluster, ensureNamespaces, installManifests, kubectl, kubectlOk, ROOT } from "./cluster.ts";
import { goModuleDir, KUBERNETES_VERSION } from "./tools.ts";

const MINOR = Number(KUBERNETES_VERSION.split(".")[1]);
const MODFILE = MINOR >= 35 ? "go.mod" : "go130.mod";

/** The directory of a Go module at the version the test control plane is built with. */
async function moduleDir(module: string): Promise<string> {
  const mod = Deno.readTextFileSync(`${ROOT}/tests/apiserver/${MODFILE}`);
  const replaced = new RegExp(
    `^\\s*${module.replaceAll(".", "\\.")} => ${module.replaceAll(".", "\\.")} (\\S+)`,
    "m",
  )
    .exec(mod)?.[1];
  const version = replaced ?? new RegExp(`^\\s*${module.replaceAll(".", "\\.")} (v\\S+)`, "m").exec(mod)?.[1];
  if (!version) throw new Error(`${module} is not required by tests/apiserver/${MODFILE}`);
  return await goModuleDir(module, version);
}

function literalsOf(dir: string, file: string, functions?: readonly string[]): string[] {
  try {
    return goStringLiterals(Deno.readTextFileSync(`${dir}/${file}`), functions);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
}

/** apimachinery's name, key and value tables (their files moved between 1.30 and 1.35; both are read). */
async function metadataValues(): Promise<string[]> {
  const dir = await moduleDir("k8s.io/apimachinery");
  return [
    ...new Set([
      ...literalsOf(dir, "pkg/api/validate/content/dns_test.go"),
      ...literalsOf(dir, "pkg/api/validate/content/kube_test.go"),
      ...literalsOf(dir, "pkg/util/validation/validation_test.go", [
        "TestIsDNS1123Label",
        "TestIsDNS1123Subdomain",
        "TestIsDNS1035Label",
        "TestIsQualifiedName",
        "TestIsValidLabelValue",
      ]),
      ...literalsOf(dir, "pkg/api/validation/path/name_test.go"),
      ...literalsOf(dir, "pkg/api/validation/objectmeta_test.go"),
    ]),
  ].filter((v) => v.length <= 300);
}

/** kube-openapi's format tables: each test function's (or file's) literals, by the format it tests. */
async function formatValues(): Promise<Map<string, string[]>> {
  const dir = `${await moduleDir("k8s.io/kube-openapi")}/pkg/validation/strfmt`;
  const byFunction: Record<string, string> = {
    TestFormatURI: "uri",
    TestFormatEmail: "email",
    TestFormatHostname: "hostname",
    TestFormatIPv4: "ipv4",
    TestFormatIPv6: "ipv6",
    TestFormatCIDR: "cidr",
    TestFormatMAC: "mac",
    TestFormatUUID3: "uuid3",
    TestFormatUUID4: "uuid4",
    TestFormatUUID5: "uuid5",
    TestFormatUUID: "uuid",
    TestFormatISBN: "isbn",
    TestFormatISBN10: "isbn10",
    TestFormatISBN13: "isbn13",
    TestFormatHexColor: "hexcolor",
    TestFormatRGBColor: "rgbcolor",
    TestFormatSSN: "ssn",
    TestFormatCreditCard: "creditcard",
    TestFormatPassword: "password",
    TestFormatBase64: "byte",
  };
  const out = new Map<string, string[]>();
  for (const [fn, format] of Object.entries(byFunction)) {
    out.set(format, literalsOf(dir, "default_test.go", [fn]));
  }
  out.set("date-time", literalsOf(dir, "time_test.go"));
  out.set("date", literalsOf(dir, "date_test.go"));
  out.set("duration", literalsOf(dir, "duration_test.go"));
  out.set("bsonobjectid", literalsOf(dir, "bson_test.go"));
  out.set("k8s-short-name", literalsOf(dir, "kubernetes-extensions_test.go"));
  for (const [k, v] of out) out.set(k, v.filter((s) => s.length <= 300));
  return out;
}

/** A verdict in common terms: admitted, or refused with these words (causes, or one message). */
interface Verdict {
  readonly refused: boolean;
  readonly words: readonly string[];
}

const INSTALL = readInstall(`${ROOT}/`);
const PROBE_CRD = parseManifests(Deno.readTextFileSync(`${ROOT}/tests/api/corpus/formats-crd.yaml`), "crd")
  .objects
  .map((o) => o.object);
const KINDS = crdKinds([...INSTALL, ...PROBE_CRD]);
const CATALOG = new KindCatalog(MINOR, [...INSTALL, ...PROBE_CRD]);
const RESOURCES = installResources([...INSTALL, ...PROBE_CRD]);
const BUILTIN_META = {
  Namespace: { version: "v1", namespaced: false, nameRule: NAME_RULES.dnsLabel },
  Role: { version: "v1", namespaced: true, nameRule: NAME_RULES.pathSegment },
} as const;

/** The name the API server generated, as the plan's: a generated name differs from run to run. */
function sameGenerated(
  words: readonly string[],
  object: Record<string, unknown>,
  planName: string,
): string[] {
  const gen = (object.metadata as { generateName?: unknown } | undefined)?.generateName;
  if (typeof gen !== "string" || !gen || (object.metadata as { name?: unknown }).name) return [...words];
  const base = quote(new TextDecoder().decode(new TextEncoder().encode(gen).slice(0, 58))).slice(0, -1);
  const re = new RegExp(
    base.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + '[bcdfghjklmnpqrstvwxz2456789]{5}"',
    "g",
  );
  return words.map((w) => w.replace(re, quote(planName)));
}

/** The causes of an Invalid message (`The K "n" is invalid: a` or `[a, b]`), else the message. */
function causesOf(body: { message?: string; details?: { causes?: { field?: string; message?: string }[] } }) {
  const causes = (body.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
  return causes.length ? causes : [body.message ?? ""];
}

async function serverVerdict(c: ApiCase): Promise<Verdict & { status: number }> {
  const o = c.object as Obj;
  const [group, version] = o.apiVersion.includes("/") ? o.apiVersion.split("/") : ["", o.apiVersion];
  const type = RESOURCES.ofKind(o.apiVersion, o.kind)!;
  const ns = type.namespaced ? `/namespaces/${(o.metadata as { namespace?: string }).namespace}` : "";
  const path = `${
    group ? `/apis/${group}` : "/api"
  }/${version}${ns}/${type.resource}?dryRun=All&fieldValidation=Strict`;
  const res = await api("POST", path, o);
  if (res.status < 300 || res.status === 409) return { refused: false, words: [], status: res.status };
  const body = res.body as {
    message?: string;
    details?: { causes?: { field?: string; message?: string }[] };
  };
  const message = body.message ?? "";
  const policy = message.indexOf("ValidatingAdmissionPolicy '");
  const words = policy >= 0 ? [message.slice(policy)] : res.status === 422 ? causesOf(body) : [message];
  return { refused: true, words: words.map((w) => currentWords(w, o)), status: res.status };
}

/** The plan's verdict of an object sent as JSON: its validation (name generated first), then the policies. */
function planVerdict(c: ApiCase): Verdict & { name: string } {
  const o = structuredClone(c.object) as Obj;
  o.metadata ??= {} as Obj["metadata"];
  if (!o.metadata.name && typeof o.metadata.generateName === "string" && o.metadata.generateName) {
    o.metadata.name = generatedName(o.metadata.generateName, canonical(o));
  }
  o.metadata.name ??= "";
  const meta = BUILTIN_META[o.kind as keyof typeof BUILTIN_META];
  const v = meta
    ? judgeMeta({ kind: o.kind, ...meta }, o as ManifestObject)
    : judge(KINDS, o as ManifestObject, undefined, { minor: MINOR });
  const name = o.metadata.name;
  if (!v.ok) return { refused: true, words: v.causes ? [...v.causes] : [withoutHead(v.message, o)], name };
  if (o.kind === "Team") {
    const denial = platformAdminDenial(v.object);
    if (denial) {
      return {
        refused: true,
        words: [
          `ValidatingAdmissionPolicy '${denial.policy}' with binding '${denial.binding}' denied request: ${denial.message}`,
        ],
        name,
      };
    }
  }
  return { refused: false, words: [], name };
}

/** A refusal's message without kubectl's head (`The Kind "name" is invalid: `). */
function withoutHead(message: string, o: { kind: string; metadata?: { name?: string } }): string {
  const head = `The ${o.kind} "${o.metadata?.name ?? ""}" is invalid: `;
  return message.startsWith(head)
    ? message.slice(head.length)
    : message.replace(/^The \S+ "[^"]*" is invalid: /, "");
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());

/** What kubectl did with a file: the objects it created and the words of each failure, client or server side. */
async function kubectlRun(text: string): Promise<{ created: string[]; failures: string[]; client: boolean }> {
  const file = await Deno.makeTempFile({ suffix: ".yaml" });
  try {
    await Deno.writeTextFile(file, text);
    const r = await kubectl([
      "create",
      "--dry-run=server",
      "--validate=strict",
      "-o",
      'jsonpath={.metadata.name}{"\\n"}',
      "-f",
      file,
    ]);
    const created = r.stdout.split("\n").filter(Boolean);
    const failures: string[] = [];
    let client = false;
    for (const block of r.stderr.split(/\n(?=error: |Error from server|The \S+ "[^"]*" is invalid)/)) {
      const b = block.trim().replaceAll(file, "FILE");
      if (!b) continue;
      const kind = /no matches for kind "[^"]*" in (?:version|group) "[^"]*"/.exec(b)?.[0];
      const decode = /^error: unable to decode "FILE": (.*)$/s.exec(b)?.[1];
      const invalid = /^The \S+ "[^"]*" is invalid: ?\n?((?:.|\n)*)$/.exec(b)?.[1];
      const server = /^Error from server \([^)]*\): error when creating "FILE": (.*)$/s.exec(b)?.[1];
      if (kind) failures.push(kind);
      else if (decode) failures.push(`unable to decode: ${decode.trim()}`);
      else if (invalid !== undefined) {
        failures.push(...invalid.split("\n").map((l) => l.replace(/^\* /, "").trim()).filter(Boolean));
      } else if (server) {
        const policy = server.indexOf("ValidatingAdmissionPolicy '");
        failures.push(policy >= 0 ? server.slice(policy).trim() : server.trim());
      } else {
        client = true;
        failures.push(`(kubectl could not read it) ${b.split("\n")[0]}`);
      }
    }
    return { created, failures, client };
  } finally {
    await Deno.remove(file);
  }
}

/** The plan's reading and verdict of a file: the objects it admits, and its refusals' words. */
function planFile(text: string): { created: string[]; failures: string[]; unreadable: number } {
  const parsed = parseManifests(text, "case.yaml");
  const created: string[] = [];
  const failures: string[] = [];
  for (const item of parsed.objects) {
    const read = kubectlVerdict(CATALOG, item.object);
    if ("refused" in read) {
      failures.push(withoutHead(read.refused.message, item.object));
      continue;
    }
    const type = RESOURCES.ofKind(item.object.apiVersion, item.object.kind);
    if (!type) {
      created.push(item.object.metadata?.name ?? "");
      continue;
    }
    const o = prepared(item.object, type, CORPUS_NAMESPACE);
    const v = validationVerdict({ kinds: KINDS, catalog: CATALOG, minor: MINOR }, o);
    if (v && !v.ok) {
      failures.push(...(v.causes ? v.causes : [withoutHead(v.message, o)]));
      continue;
    }
    const denial = o.kind === "Team" && v?.ok ? platformAdminDenial(v.object) : undefined;
    if (denial) {
      failures.push(
        `ValidatingAdmissionPolicy '${denial.policy}' with binding '${denial.binding}' denied request: ${denial.message}`,
      );
    } else created.push(o.metadata.name);
  }
  // No object at all: `plan: no manifests found` (kubectl: "no objects passed to create").
  if (!parsed.objects.length && !parsed.unreadable.length) failures.push("(no objects)");
  return { created, failures, unreadable: parsed.unreadable.length };
}

Deno.test("plan and the API server agree on metadata, formats, YAML forms and kinds", async (t) => {
  await installManifests();
  await kubectlOk(["apply", "--server-side", "-f", "tests/api/corpus/formats-crd.yaml"]);
  await kubectlOk([
    "wait",
    "--for=condition=Established",
    "--timeout=60s",
    "crd/formatprobes.corpus.butler.test",
  ]);
  await ensureNamespaces([CORPUS_NAMESPACE]);
  const [metadata, formats] = [await metadataValues(), await formatValues()];
  const apiCases = [...metadataValueCases(metadata), ...generatedMetadataCases(), ...formatCases(formats)];
  const files = yamlCases();

  const verdictDiffs: string[] = [];
  const wordDiffs: string[] = [];
  let refusedByServer = 0;
  const queue = [...apiCases];
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const plan = planVerdict(c);
      const server = await serverVerdict(c);
      if (server.refused) refusedByServer++;
      const serverWords = sameGenerated(server.words, c.object, plan.name);
      const line = `${c.name}\n    plan:   ${plan.refused} ${
        plan.words.join(" | ")
      }\n    server: ${server.refused} ${serverWords.join(" | ")} (${server.status})`;
      if (plan.refused !== server.refused) verdictDiffs.push(line);
      else if (server.refused && !sameSet(plan.words, serverWords)) wordDiffs.push(line);
    }
  }));
  let fileWordsCompared = 0;
  for (const f of files) {
    const k = await kubectlRun(f.text);
    const p = planFile(f.text);
    const line = `${f.name}\n    plan:    created ${p.created.join(",")} | ${p.failures.join(" | ")}${
      p.unreadable ? ` | ${p.unreadable} unreadable` : ""
    }\n    kubectl: created ${k.created.join(",")} | ${k.failures.join(" | ")}`;
    // kubectl stops reading a file at a document it cannot read; plan reads on (and says which it could not).
    const createdAgree = k.client && p.unreadable ? k.created.every((n) => p.created.includes(n)) : sameSet(
      p.created.filter((n) => !n.startsWith("gen-")),
      k.created.filter((n) => !n.startsWith("gen-")),
    );
    const failed = (p.failures.length + p.unreadable > 0) === (k.failures.length > 0);
    if (!createdAgree || !failed) verdictDiffs.push(line);
    else if (!k.client && k.failures.length && !p.failures.includes("(no objects)")) {
      fileWordsCompared++;
      if (!sameSet(p.failures, k.failures.map((w) => currentWords(w)))) wordDiffs.push(line);
    }
  }
  const objects = apiCases.length + files.length;
  const report = {
    kubernetes: KUBERNETES_VERSION,
    objects,
    apiObjects: apiCases.length,
    files: files.length,
    refusedByServer,
    sameVerdict: objects - verdictDiffs.length,
    sameWords: objects - verdictDiffs.length - wordDiffs.length,
    fileWordsCompared,
    verdictDiffs: verdictDiffs.sort(),
    wordDiffs: wordDiffs.sort(),
  };
  const out = Deno.env.get("META_CORPUS_JSON") ?? `${cluster().dir}/meta-corpus.json`;
  Deno.writeTextFileSync(out, JSON.stringify(report, null, 2));
  console.log(
    `meta corpus (Kubernetes ${KUBERNETES_VERSION}): ${objects} cases (${apiCases.length} objects, ${files.length} files through kubectl; ${refusedByServer} objects refused by the API server); same verdict ${report.sameVerdict}, same words ${report.sameWords}`,
  );
  await t.step("the same verdict on every case", () => {
    assert.deepEqual(report.verdictDiffs, []);
  });
  await t.step("the same words on at least 99 % of them", () => {
    assert.ok(report.sameWords >= 0.99 * objects, report.wordDiffs.slice(0, 40).join("\n"));
  });
});
