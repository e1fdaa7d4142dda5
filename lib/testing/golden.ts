/**
 * Golden fixtures: `tests/fixtures/<kind>/<hook>/<case>/request.json` and `response.json`, with an optional
 * `now` file holding an RFC 3339 time. Each case becomes one test that posts the request through the real
 * app (`app.request()`) and compares the answer deeply. `UPDATE_GOLDEN=1` rewrites `response.json` on purpose.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { Hono } from "hono";
import { NOW_HEADER } from "../http/mod.ts";
import type { AppEnv } from "../http/mod.ts";

/** One discovered fixture case. */
export interface GoldenCase {
  readonly kind: string;
  readonly hook: string;
  readonly name: string;
  readonly dir: string;
  readonly route: string;
}

/** The route a fixture directory maps to: `/hooks/<kind>/<hook>`, or `/webhooks/<hook>/<kind>` for admission. */
export function goldenRoute(kind: string, hook: string): string {
  return hook === "validate" || hook === "mutate" ? `/webhooks/${hook}/${kind}` : `/hooks/${kind}/${hook}`;
}

function dirs(path: string): string[] {
  try {
    return [...Deno.readDirSync(path)].filter((e) => e.isDirectory).map((e) => e.name).sort();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
}

/** Lists every fixture case below `root`, in a stable order. */
export function discoverGoldenCases(root: string): GoldenCase[] {
  return dirs(root).flatMap((kind) =>
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
}

/** Posts one case's request through the app and returns the HTTP status and parsed body. */
export async function runGoldenCase(
  app: Hono<AppEnv>,
  c: GoldenCase,
): Promise<{ status: number; body: unknown }> {
  const request = Deno.readTextFileSync(`${c.dir}/request.json`);
  const headers: Record<string, string> = { "content-type": "application/json" };
  try {
    headers[NOW_HEADER] = Deno.readTextFileSync(`${c.dir}/now`).trim();
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const res = await app.request(c.route, { method: "POST", headers, body: request });
  return { status: res.status, body: await res.json() };
}

/** Serialises a fixture the way it is stored: two-space JSON and a final newline. */
export function formatFixture(value: unknown): string {
  return JSON.stringify(value, null, 2) + "\n";
}

/**
 * Registers one `Deno.test` per fixture case below `root`. The app must run with `CLOCK_OVERRIDE` semantics
 * (so a case's `now` file reaches the hook) and a fixed fallback clock.
 */
export function registerGoldenTests(root: string, app: Hono<AppEnv>): GoldenCase[] {
  const update = Deno.env.get("UPDATE_GOLDEN") === "1";
  const cases = discoverGoldenCases(root);
  for (const c of cases) {
    Deno.test(`golden ${c.kind}/${c.hook}/${c.name}`, async () => {
      const { status, body } = await runGoldenCase(app, c);
      assert.equal(status, 200, `expected 200, got ${status}: ${JSON.stringify(body)}`);
      const path = `${c.dir}/response.json`;
      if (update) {
        Deno.writeTextFileSync(path, formatFixture(body));
        return;
      }
      const expected = JSON.parse(Deno.readTextFileSync(path));
      assert.deepStrictEqual(body, expected);
    });
  }
  return cases;
}
