/**
 * The one program: `main.ts` serves the hooks and admission webhooks ({@link ./server.ts}); `main.ts reporter`
 * runs the LoadBalancer reporter ({@link ./reporter.ts}); `main.ts plan` previews a folder of manifests
 * ({@link ./plan.ts}).
 *
 * @module
 */
const [command, ...rest] = Deno.args;

if (command === undefined || command === "serve") {
  await import("./server.ts");
} else if (command === "reporter") {
  await import("./reporter.ts");
} else if (command === "plan") {
  await import("./plan.ts");
} else {
  console.error(
    `unknown command "${command}"${rest.length ? ` (with ${rest.length} more argument(s))` : ""}\n` +
      "usage: main.ts [serve]     serve the Metacontroller hooks and admission webhooks\n" +
      "       main.ts reporter    write LoadBalancerInventories from the tenant clusters' Services\n" +
      "       main.ts plan ...    show what admission and the controllers will do with a folder of manifests",
  );
  Deno.exit(2);
}
