/**
 * What the load scripts share: `--name=value` flags, and running the script inside a test control plane
 * when none is given.
 *
 * @module
 */
/** The text given as `--name=value` among `args`, else `undefined`. */
export function stringFlag(args: readonly string[], name: string): string | undefined {
  return args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

/** The number given as `--name=value` among `args`, else `fallback`. */
export function numberFlag(args: readonly string[], name: string, fallback: number): number {
  return Number(stringFlag(args, name) ?? fallback);
}

/**
 * Without `BUTLER_TEST_CLUSTER`, starts a test control plane, runs `script` again inside it with `args` (and
 * `env`), stops the plane and exits with the run's code; with it, returns at once. `DENO_CERT` must be set when
 * Deno starts, hence the second process.
 */
export async function inTestCluster(
  script: string,
  args: readonly string[],
  env: () => Promise<Record<string, string>> = () => Promise.resolve({}),
): Promise<void> {
  if (Deno.env.get("BUTLER_TEST_CLUSTER")) return;
  // Imported here, so that a script that only reads flags (the fake tenants) needs no more permissions.
  const { startControlPlane } = await import("../api/run.ts");
  const { controlPlaneBinary } = await import("../api/tools.ts");
  const cp = await startControlPlane(await controlPlaneBinary(), { controllers: false });
  const run = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(script).pathname, ...args],
    env: { BUTLER_TEST_CLUSTER: cp.dir, DENO_CERT: `${cp.dir}/ca.crt`, ...await env() },
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  await cp.stop();
  await Deno.remove(cp.dir, { recursive: true });
  Deno.exit(run.code);
}
