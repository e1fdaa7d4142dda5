import assert from "node:assert/strict";
import { hookCalls } from "./hook_log.ts";

Deno.test("hook calls are counted by route, 429s apart; other lines and routes are skipped", () => {
  const line = (route: string, status: number) =>
    JSON.stringify({ msg: "request", method: "POST", route, status });
  const log = [
    line("/hooks/team/sync", 200),
    line("/hooks/team/sync", 429),
    line("/hooks/team/sync", 500),
    line("/hooks/ipallocation/sync", 200),
    line("/webhooks/validate/tenantcluster", 200),
    line("/readyz", 200),
    '{"msg":"request", broken',
    JSON.stringify({ msg: "hook worker died" }),
    "",
  ].join("\n");
  assert.deepEqual(hookCalls(log), {
    "/hooks/ipallocation/sync": { answered: 1, busy: 0 },
    "/hooks/team/sync": { answered: 2, busy: 1 },
  });
});
