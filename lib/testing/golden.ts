/**
 * Golden fixtures: `tests/fixtures/<kind>/<hook>/<case>/request.json` and `response.json`, with an optional
 * `now` file holding an RFC 3339 time. Admission cases (`<kind>/admission/<case>`) post an AdmissionReview to
 * `/webhooks/validate/<kind>` and hold what the API answers to the webhook's reads in `reads.json` (see
 * {@linkcode fixtureReader}). Each case becomes one test that posts the request through the real
 * app (`app.request()`) and compares the answer deeply. `UPDATE_GOLDEN=1` rewrites `response.json` on purpose.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Hono } from "hono";
import { NOW_HEADER } from "../http/mod.ts";
import type { AppEnv } from "../http/mod.ts";
import { KubeApiError, type KubeClient } from "../kube/mod.ts";

/** One discovered fixture case. */
export interface GoldenCase {
  readonly kind: string;
  readonly hook: string;
  readonly name: string;
  readonly dir: string;
  readonly route: string;
}

/** The route a fixture directory maps to: `/hooks/<kind>/<hook>`, or `/webhooks/validate/<kind>` for admission. */
export function goldenRoute(kind: string, hook: string): string {
  return hook === "admission" ? `/webhooks/validate/${kind}` : `/hooks/${kind}/${hook}`;
}

/**
 * The API as an admission fixture's `reads.json` describes it: API path (with its query) -> the object or list
 * the API server returns. A GET of a path it lacks is a 404 (`undefined`); a list it lacks fails the test, so a
 * webhook cannot read more than its fixture shows. Writes succeed and are recorded in `writes` (in order); a path
 * listed under `"conflicts"` answers that many writes with 409 (as when another webhook wrote first) before one
 * succeeds.
 */
export function fixtureReader(
  dir: string,
): KubeClient & { writes: { method: string; path: string; body: unknown }[] } {
  const reads: Record<string, unknown> = JSON.parse(readOptional(`${dir}/reads.json`) ?? "{}");
  const writes: { method: string; path: string; body: unknown }[] = [];
  const conflicts = [...(reads.conflicts as string[] | undefined) ?? []];
  return {
    writes,
    get: (path) => Promise.resolve(reads[path]),
    write(method, path, body) {
      const at = conflicts.indexOf(path);
      if (at >= 0) {
        conflicts.splice(at, 1);
        return Promise.reject(new KubeApiError(409, "Conflict", "the object has been modified", path));
      }
      // As the API receives it: the JSON the client sends.
      writes.push({ method, path, body: JSON.parse(JSON.stringify(body)) });
      return Promise.resolve(body);
    },
    list(path, options = {}) {
      const key = options.labelSelector ? `${path}?labelSelector=${options.labelSelector}` : path;
      if (!(key in reads)) return Promise.reject(new Error(`${dir}/reads.json has no list ${key}`));
      return Promise.resolve((reads[key] as { items?: unknown[] }).items ?? []);
    },
  };
}

/** A fixture's optional file, or `undefined` when the case has none. */
function readOptional(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

/**
 * Whether golden files are being recorded (`UPDATE_GOLDEN=1`). Refused under `CI=true`: goldens are regenerated
 * on purpose, on a developer's machine, and reviewed; a CI run that rewrote them would pass whatever it computed.
 *
 * @example
 * ```ts
 * if (updatingGoldens()) Deno.writeTextFileSync(path, formatFixture(body));
 * ```
 */
export function updatingGoldens(env: (name: string) => string | undefined = (n) => Deno.env.get(n)): boolean {
  const update = env("UPDATE_GOLDEN") === "1";
  if (update && env("CI") === "true") {
    throw new Error(
      "UPDATE_GOLDEN=1 is refused under CI=true: record goldens on purpose, locally, and review them",
    );
  }
  return update;
}

function dirs(path: string): string[] {
  try {
    return [...Deno.readDirSync(path)].filter((e) => e.isDirectory).map((e) => e.name).sort();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
}

/**
 * Lists every fixture case below `root`, in a stable order. A root that is missing or holds no case is an error,
 * not zero tests (a moved folder would otherwise pass silently).
 */
export function discoverGoldenCases(root: string): GoldenCase[] {
  try {
    Deno.statSync(root);
  } catch {
    throw new Error(`golden fixtures folder ${root} not found`);
  }
  const cases = dirs(root).flatMap((kind) =>
    dirs(`${root}/${kind}`).flatMap((hook) =>
      dirs(`${root}/${kind}/${hook}`).map((name) => ({
        kind,
        hook,
        name,
        dir: `${root}/${kind}/${hook}/${name}`,
        route: goldenRoute(kind, hook),
      }))
    )
  );
  if (!cases.length) throw new Error(`golden fixtures folder ${root} holds no case`);
  return cases;
}

/** Posts one case's request through the app and returns the HTTP status and parsed body. */
export async function runGoldenCase(
  app: Hono<AppEnv>,
  c: GoldenCase,
): Promise<{ status: number; body: unknown }> {
  const request = Deno.readTextFileSync(`${c.dir}/request.json`);
  const headers: Record<string, string> = { "content-type": "application/json" };
  const now = readOptional(`${c.dir}/now`);
  if (now !== undefined) headers[NOW_HEADER] = now.trim();
  const res = await app.request(c.route, { method: "POST", headers, body: request });
  return { status: res.status, body: await res.json() };
}

/** Serialises a fixture the way it is stored: two-space JSON and a final newline. */
export function formatFixture(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}

/**
 * Registers one `Deno.test` per fixture case below `root`. The app must run with `CLOCK_OVERRIDE` semantics
 * (so a case's `now` file reaches the hook) and a fixed fallback clock. With `writesOf`, what a case wrote to
 * the API is compared with its `writes.json` (absent means nothing may be written).
 */
export function registerGoldenTests(
  root: string,
  app: Hono<AppEnv>,
  appFor: (c: GoldenCase) => Hono<AppEnv> = () => app,
  writesOf: (c: GoldenCase) => readonly unknown[] = () => [],
): GoldenCase[] {
  const update = updatingGoldens();
  const cases = discoverGoldenCases(root);
  for (const c of cases) {
    Deno.test(`golden ${c.kind}/${c.hook}/${c.name}`, async () => {
      const { status, body } = await runGoldenCase(appFor(c), c);
      assert.equal(status, 200, `expected 200, got ${status}: ${JSON.stringify(body)}`);
      const path = `${c.dir}/response.json`;
      const writesPath = `${c.dir}/writes.json`;
      const writes = writesOf(c);
      if (update) {
        // Recording still checks what it can: a well-formed answer of the right kind (the app has validated it
        // against the response schema to answer 200) for the case's request.
        assert.ok(body !== null && typeof body === "object" && !Array.isArray(body), "an object answer");
        if (c.hook === "admission") {
          const uid = JSON.parse(Deno.readTextFileSync(`${c.dir}/request.json`)).request?.uid;
          assert.equal(
            (body as { response?: { uid?: string } }).response?.uid,
            uid,
            "the review's uid echoed",
          );
        }
        Deno.writeTextFileSync(path, formatFixture(body));
        if (writes.length) Deno.writeTextFileSync(writesPath, formatFixture(writes));
        else if (readOptional(writesPath) !== undefined) Deno.removeSync(writesPath);
        return;
      }
      const expected = JSON.parse(Deno.readTextFileSync(path));
      assert.deepStrictEqual(body, expected);
      const expectedWrites = JSON.parse(readOptional(writesPath) ?? "[]");
      assert.deepStrictEqual(writes, expectedWrites, "the API writes of the case");
    });
  }
  return cases;
}
