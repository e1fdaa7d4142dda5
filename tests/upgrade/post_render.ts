/**
 * Helm's post-renderer in `test:upgrade`: the chart's objects with the hook Service's addresses mapped onto the
 * loopback fleet (as `test:e2e` maps the kustomize render), read from standard input, written to standard output.
 * Configured by BUTLER_HOOKS_URL, BUTLER_WEBHOOKS_URL and BUTLER_TEST_CLUSTER.
 *
 * @module
 */
import { pointAtLoopback } from "../e2e/stack.ts";

const rendered = await new Response(Deno.stdin.readable).text();
const objects = pointAtLoopback(
  rendered,
  Deno.env.get("BUTLER_TEST_CLUSTER")!,
  Deno.env.get("BUTLER_HOOKS_URL")!,
  Deno.env.get("BUTLER_WEBHOOKS_URL")!,
);
console.log(objects.map((o) => JSON.stringify(o)).join("\n---\n"));
