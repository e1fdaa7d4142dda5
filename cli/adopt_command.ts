/**
 * `kubectl butler adopt`: the I/O of {@link ./adopt.ts}. Lists Butler's parents and their controllers' child
 * kinds, and writes each adoption with the object's resourceVersion as the precondition (a conflict is said, and
 * running the command again finishes the job: it is idempotent).
 *
 * @module
 */
import type { KubeClient } from "../lib/kube/mod.ts";
import {
  type Adoption,
  adoptions,
  CHILD_KINDS,
  keyOf,
  type Listed,
  PARENT_KINDS,
  type Parents,
  renderAdoptions,
} from "./adopt.ts";
import { type CliIo, connect, outputOf, refusal, structured, UsageError, type Values } from "./command.ts";

/** The collection path of a kind (every namespace). */
function collection(apiVersion: string, resource: string): string {
  return `${apiVersion.includes("/") ? "/apis" : "/api"}/${apiVersion}/${resource}`;
}

/** The object path of one listed object. */
function objectPath(a: Adoption): string {
  const child = a.child;
  const ns = a.namespace ? `/namespaces/${encodeURIComponent(a.namespace)}` : "";
  const [group, version] = child.apiVersion.includes("/")
    ? child.apiVersion.split("/")
    : ["", child.apiVersion];
  const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`;
  return `${prefix}${ns}/${child.resource}/${encodeURIComponent(a.name)}`;
}

/** A list that may not exist here (Cluster API's kinds without the component): empty, and said. */
async function listed(kube: KubeClient, path: string, selector: string | undefined, io: CliIo) {
  try {
    return await kube.list(path, selector ? { labelSelector: selector } : {}) as Listed[];
  } catch (err) {
    if (refusal(err) === undefined) throw err;
    io.stderr(`note: ${path} not listed (${refusal(err)}): nothing of it to adopt\n`);
    return [];
  }
}

/** `kubectl butler adopt [--dry-run] [-o text|json|yaml]`. */
export async function adopt(names: readonly string[], values: Values, io: CliIo): Promise<number> {
  const output = outputOf(values, ["text", "json", "yaml"]);
  if (names.length) {
    throw new UsageError("adopt takes no arguments: it looks at every Team, TenantCluster and claim");
  }
  const { kube } = connect(values, io);
  const byKey = async (p: (typeof PARENT_KINDS)[number]) =>
    new Map(
      (await listed(kube, collection(p.apiVersion, p.resource), undefined, io)).map((o) => [keyOf(o), o]),
    );
  const parents: Parents = {
    Team: await byKey(PARENT_KINDS[0]!),
    TenantCluster: await byKey(PARENT_KINDS[1]!),
    IPAddressClaim: await byKey(PARENT_KINDS[2]!),
  };
  const dryRun = values["dry-run"] ?? false;
  const done: Adoption[] = [];
  let failed = 0;
  for (const child of CHILD_KINDS) {
    const objects = await listed(kube, collection(child.apiVersion, child.resource), child.selector, io);
    for (const a of adoptions(child, objects, parents)) {
      const path = objectPath(a);
      try {
        await kube.write("PUT", dryRun ? `${path}?dryRun=All` : path, a.object);
        done.push(a);
      } catch (err) {
        if (refusal(err) === undefined) throw err;
        failed++;
        io.stderr(`error: ${path}: ${refusal(err)} (run the command again)\n`);
      }
    }
  }
  io.stdout(
    output === "text" ? renderAdoptions(done, dryRun) : structured(
      {
        dryRun,
        adopted: done.map((a) => ({
          kind: a.child.kind,
          ...(a.namespace ? { namespace: a.namespace } : {}),
          name: a.name,
          parent: a.parent,
          write: a.write,
        })),
        failed,
      },
      output,
    ),
  );
  return failed ? 1 : 0;
}
