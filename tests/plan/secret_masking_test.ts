/**
 * Class: a Secret value reaching what `plan` prints. `plan` runs in CI on a pull request and its output is read by
 * everyone who reads the job's log: no Secret value (`data`, its decoded text, `stringData`) of the input or of
 * `--live` may appear in any output (text, `--diff`, `-o json`, `-o yaml`), whatever the Secrets' shapes, whether
 * the input changes them, leaves them or does not name them, and whether they are refused.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { encodeBase64 } from "../../lib/encoding/mod.ts";
import { type Obj, renderDiff, renderObjects, renderText, type SourcedObject } from "../../lib/plan/mod.ts";
import { plan } from "./helpers.ts";

const token = fc.stringMatching(/^[A-Za-z0-9+/=_.-]{10,24}$/).map((t) => `Sx${t}`);
const key = fc.stringMatching(/^[a-z][a-z0-9._-]{0,12}$/);
const values = fc.dictionary(key, token, { minKeys: 0, maxKeys: 3 });

/** A Secret's shape: where it is (input, live, both), its values on each side, a value that is not base64. */
const secretCase = fc.record({
  name: fc.stringMatching(/^[a-z][a-z0-9-]{0,14}[a-z0-9]$/),
  namespace: fc.constantFrom("default", "butler-system"),
  where: fc.constantFrom("input", "live", "both"),
  data: values,
  stringData: values,
  liveData: values,
  notBase64: fc.option(token.map((t) => `${t}!`), { nil: undefined }),
  annotated: fc.boolean(),
  // As written: a Secret refused for its version or its kind's spelling is printed as written, masked all the same.
  type: fc.constantFrom(["v1", "Secret"], ["v1", "Secret"], ["V1", "Secret"], ["v1", "secret"], [
    "v2",
    "Secret",
  ]),
});

type SecretCase = typeof secretCase extends fc.Arbitrary<infer T> ? T : never;

const b64 = (s: string) => encodeBase64(new TextEncoder().encode(s));

function secret(c: SecretCase, data: Record<string, string>, stringData?: Record<string, string>): Obj {
  const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)]));
  if (c.notBase64) encoded["raw"] = c.notBase64;
  const o: Obj = {
    apiVersion: c.type[0]!,
    kind: c.type[1]!,
    metadata: { name: c.name, namespace: c.namespace },
    data: encoded,
    ...(stringData && Object.keys(stringData).length ? { stringData } : {}),
  };
  if (c.annotated) {
    // What `kubectl apply` leaves on a live object: the whole object as applied, values included.
    o.metadata.annotations = { "kubectl.kubernetes.io/last-applied-configuration": JSON.stringify(o) };
  }
  return o;
}

Deno.test("plan prints no Secret value in any output", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(secretCase, { minLength: 1, maxLength: 3, selector: (c) => c.name }),
      async (cases) => {
        const desired: SourcedObject[] = [];
        const live: Obj[] = [];
        const secrets: string[] = [];
        for (const c of cases) {
          secrets.push(
            ...Object.values(c.data),
            ...Object.values(c.stringData),
            ...Object.values(c.liveData),
          );
          secrets.push(...[...Object.values(c.data), ...Object.values(c.liveData)].map(b64));
          if (c.notBase64) secrets.push(c.notBase64);
          if (c.where !== "live") {
            desired.push({ object: secret(c, c.data, c.stringData), source: `secrets/${c.name}.yaml#1` });
          }
          if (c.where !== "input") live.push(secret(c, c.liveData));
        }
        // Something else the input changes, so that a run with only live Secrets still prints a plan.
        desired.push({
          object: {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "other", namespace: "default" },
            data: {},
          },
          source: "other.yaml#1",
        });
        const result = await plan(desired, { live });
        const outputs = {
          text: renderText(result),
          diff: renderDiff(result),
          json: renderObjects(result, "json"),
          yaml: renderObjects(result, "yaml"),
        };
        for (const [format, out] of Object.entries(outputs)) {
          for (const s of secrets) {
            assert.equal(
              out.includes(s),
              false,
              `${format} output holds ${s}:\n${out}`,
            );
          }
        }
        // A live Secret the input does not name is not printed at all.
        const items: Obj[] = JSON.parse(outputs.json).items;
        for (const c of cases.filter((c) => c.where === "live")) {
          assert.equal(items.some((o) => o.kind === "Secret" && o.metadata.name === c.name), false);
        }
      },
    ),
    { numRuns: 25, seed: 57 },
  );
});

Deno.test("a changed Secret value is said to change, as kubectl diff masks it", async () => {
  const s = (v: string): Obj => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "s", namespace: "default" },
    type: "Opaque",
    data: { same: b64("unchanged-value"), changed: b64(v) },
  });
  const result = await plan([{ object: s("after-value"), source: "s.yaml#1" }], {
    live: [s("before-value")],
  });
  assert.equal(
    renderDiff(result),
    '~ Secret default/s\n    data.changed: "*** (before)" -> "*** (after)"\n',
  );
});
