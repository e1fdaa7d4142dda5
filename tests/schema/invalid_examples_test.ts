/**
 * Every invalid example is refused offline in the words its `# expect:` line gives: those the CRDs refuse by the
 * in-process judge; those only a policy refuses (`# refused-by:`) pass the schema and are refused by that shipped
 * policy's CEL, evaluated in process. The real API server tier checks the same words against the API server.
 */
import assert from "node:assert/strict";
import { parse, parseAllDocuments } from "yaml";
import { manifestFiles } from "../../lib/plan/mod.ts";
import { judge, type ManifestObject } from "../../lib/schema/mod.ts";
import { KINDS, platformAdminDenial } from "./policies.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
/** The first shipped policy that refuses a create of `o` by a platform admin, in its words. */
function policyRefusal(o: ManifestObject): string | undefined {
  const denial = platformAdminDenial(o);
  return denial && `ValidatingAdmissionPolicy ${denial.policy}: ${denial.message}`;
}

Deno.test("every invalid example: refused by its schema, or by its policy's CEL, in its words", async (t) => {
  for (const file of manifestFiles(`${ROOT}examples/invalid`)) {
    const text = Deno.readTextFileSync(file);
    const expect = /^# expect: (.+)$/m.exec(text)?.[1];
    const policy = /^# refused-by: (.+)$/m.exec(text)?.[1];
    await t.step(file.slice(ROOT.length), () => {
      assert.ok(expect, "an invalid example says what it expects");
      const object = parse(text) as ManifestObject;
      const verdict = judge(KINDS, object);
      if (policy) {
        assert.ok(verdict.ok, !verdict.ok ? verdict.message : "");
        const refusal = policyRefusal(object) ?? "admitted";
        assert.ok(refusal.startsWith(`${policy}: `) && refusal.includes(expect), refusal);
      } else {
        assert.ok(
          !verdict.ok && verdict.message.includes(expect),
          !verdict.ok ? verdict.message : "admitted",
        );
        assert.equal(policyRefusal(object), undefined, "no policy refuses what the schema refuses, here");
      }
    });
  }
});

Deno.test("every valid example passes its schema and every shipped policy, for a platform admin", () => {
  const files = manifestFiles(`${ROOT}examples`).filter((f) => !f.includes("/examples/invalid/"));
  for (const file of files) {
    for (
      const object of parseAllDocuments(Deno.readTextFileSync(file)).map((d) => d.toJS() as ManifestObject)
    ) {
      if (!KINDS.has(`${object?.apiVersion}/${object?.kind}`)) continue;
      const verdict = judge(KINDS, object);
      assert.ok(verdict.ok, `${file}: ${!verdict.ok ? verdict.message : ""}`);
      assert.equal(policyRefusal(object), undefined, file);
    }
  }
});
