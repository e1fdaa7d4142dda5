import assert from "node:assert/strict";
import { KubeApiError, type KubeClient } from "../lib/kube/mod.ts";
import {
  allMoved,
  type ClusterObject,
  formatResults,
  migrateClusters,
  migrationUpdate,
  selectClusters,
  withoutMigrationAnnotation,
} from "./env_migrate.ts";

const ENV = "butler.butlerlabs.dev/environment";
const MIGRATION = "butler.butlerlabs.dev/migration-operation";

const tc = (name: string, env?: string, extra: Partial<ClusterObject["metadata"]> = {}): ClusterObject => ({
  apiVersion: "butler.butlerlabs.dev/v1alpha1",
  kind: "TenantCluster",
  metadata: {
    name,
    namespace: "team-a",
    resourceVersion: "1",
    ...(env ? { labels: { [ENV]: env } } : {}),
    ...extra,
  },
  spec: {},
});

/**
 * An API server in memory: resourceVersion preconditions (409), dry runs that store nothing, and an admission
 * that refuses what `refuse` says (with the API server's words), or the label change without the annotation.
 */
function fakeKube(
  clusters: ClusterObject[],
  refuse: (c: ClusterObject) => string | undefined = () => undefined,
) {
  const store = new Map(clusters.map((c) => [c.metadata.name, structuredClone(c)]));
  const writes: { path: string; body: ClusterObject }[] = [];
  let version = 10;
  const nameOf = (path: string) => decodeURIComponent(path.split("?")[0]!.split("/").at(-1)!);
  const kube: KubeClient = {
    get: (path) => Promise.resolve(structuredClone(store.get(nameOf(path)))),
    list: () => Promise.resolve([...store.values()].map((c) => structuredClone(c))),
    write(_method, path, body) {
      const next = structuredClone(body) as ClusterObject;
      writes.push({ path, body: next });
      const stored = store.get(nameOf(path));
      if (!stored) return Promise.reject(new KubeApiError(404, "NotFound", "not found", path));
      if (stored.metadata.resourceVersion !== next.metadata.resourceVersion) {
        return Promise.reject(new KubeApiError(409, "Conflict", "the object has been modified", path));
      }
      const labelChanged = stored.metadata.labels?.[ENV] !== next.metadata.labels?.[ENV];
      if (labelChanged && next.metadata.annotations?.[MIGRATION] !== "true") {
        return Promise.reject(
          new KubeApiError(422, "Invalid", "env label changes require the annotation", path),
        );
      }
      const refusal = refuse(next);
      if (refusal) return Promise.reject(new KubeApiError(403, "Forbidden", refusal, path));
      next.metadata.resourceVersion = String(++version);
      if (!path.includes("dryRun=All")) store.set(next.metadata.name, next);
      return Promise.resolve(structuredClone(next));
    },
  };
  return { kube, store, writes };
}

Deno.test("env migrate", async (t) => {
  await t.step("the update sets the label and the annotation together, and keeps everything else", () => {
    const c = tc("c1", "dev", { annotations: { keep: "me" }, labels: { [ENV]: "dev", app: "x" } });
    const u = migrationUpdate(c, "prod")!;
    assert.deepEqual(u.metadata.labels, { [ENV]: "prod", app: "x" });
    assert.deepEqual(u.metadata.annotations, { keep: "me", [MIGRATION]: "true" });
    assert.equal(u.metadata.resourceVersion, "1");
    assert.deepEqual(withoutMigrationAnnotation(u).metadata.annotations, { keep: "me" });
    assert.equal(migrationUpdate(c, "dev"), undefined, "already there: nothing to send");
  });

  await t.step(
    "a migration moves, then removes the annotation; the stored cluster has no annotation",
    async () => {
      const { kube, store, writes } = fakeKube([tc("c1", "dev")]);
      const results = await migrateClusters(kube, [{ namespace: "team-a", name: "c1" }], "prod", false);
      assert.deepEqual(results, [{
        namespace: "team-a",
        name: "c1",
        to: "prod",
        from: "dev",
        outcome: "moved",
      }]);
      assert.equal(writes.length, 2);
      assert.equal(writes[0]!.body.metadata.annotations?.[MIGRATION], "true");
      assert.equal(store.get("c1")!.metadata.labels?.[ENV], "prod");
      assert.equal(store.get("c1")!.metadata.annotations?.[MIGRATION], undefined);
    },
  );

  await t.step("a dry run asks admission (dryRun=All) once and changes nothing", async () => {
    const { kube, store, writes } = fakeKube(
      [tc("c1", "dev"), tc("c2", "dev")],
      (c) => c.metadata.name === "c2" ? 'environment "prod" is full' : undefined,
    );
    const results = await migrateClusters(
      kube,
      [{ namespace: "team-a", name: "c1" }, { namespace: "team-a", name: "c2" }],
      "prod",
      true,
    );
    assert.deepEqual(results.map((r) => r.outcome), ["moved", "refused"]);
    assert.ok(writes.every((w) => w.path.endsWith("?dryRun=All")));
    assert.equal(writes.length, 2);
    assert.equal(store.get("c1")!.metadata.labels?.[ENV], "dev");
    assert.equal(
      formatResults(results, true),
      "team-a/c1: dev -> prod: would move\n" +
        'team-a/c2: dev -> prod: would be refused: environment "prod" is full\n' +
        "would move 1 of 2 cluster(s) to prod; 1 would be refused\n",
    );
  });

  await t.step("a refusal of one does not stop the others; the summary and exit code say so", async () => {
    const { kube } = fakeKube(
      [tc("a", "dev"), tc("b", "dev"), tc("c", "prod")],
      (c) => c.metadata.name === "b" ? "per-member cap reached" : undefined,
    );
    const results = await migrateClusters(
      kube,
      ["a", "b", "c", "gone"].map((name) => ({ namespace: "team-a", name })),
      "prod",
      false,
    );
    assert.deepEqual(results.map((r) => r.outcome), ["moved", "refused", "unchanged", "notFound"]);
    assert.equal(allMoved(results), false);
    assert.equal(allMoved(results.filter((r) => r.outcome !== "refused" && r.outcome !== "notFound")), true);
    assert.match(
      formatResults(results, false),
      /moved 1 of 4 cluster\(s\) to prod; 1 already there, 1 refused, 1 not found\n$/,
    );
  });

  await t.step("a cluster changed under it (409) is read again and migrated", async () => {
    const { kube, store } = fakeKube([tc("c1", "dev")]);
    let first = true;
    const racing: KubeClient = {
      ...kube,
      async get(path) {
        const got = await kube.get(path) as ClusterObject;
        if (first) {
          first = false;
          // Someone else updates it between our read and our write.
          store.get("c1")!.metadata.resourceVersion = "5";
        }
        return got;
      },
    };
    const [r] = await migrateClusters(racing, [{ namespace: "team-a", name: "c1" }], "prod", false);
    assert.equal(r!.outcome, "moved");
    assert.equal(store.get("c1")!.metadata.labels?.[ENV], "prod");
  });

  await t.step(
    "an annotation that could not be removed is reported with the command that removes it",
    async () => {
      const { kube } = fakeKube([tc("c1", "dev")]);
      let n = 0;
      const flaky: KubeClient = {
        ...kube,
        write: (m, p, b) =>
          ++n === 2
            ? Promise.reject(new KubeApiError(0, "Unreachable", "connection reset", p))
            : kube.write(m, p, b),
      };
      const [r] = await migrateClusters(flaky, [{ namespace: "team-a", name: "c1" }], "prod", false);
      assert.equal(r!.outcome, "incomplete");
      assert.match(
        r!.message!,
        /kubectl annotate tenantcluster c1 -n team-a butler\.butlerlabs\.dev\/migration-operation-/,
      );
    },
  );

  await t.step("bulk selection: the team's clusters, optionally only those without an environment", () => {
    const items = [
      tc("z", undefined),
      tc("a", "dev"),
      { ...tc("other", undefined), spec: { teamRef: { name: "b" } } },
      {
        ...tc("m", undefined),
        metadata: { ...tc("m").metadata, namespace: "shared" },
        spec: { teamRef: { name: "a" } },
      },
    ];
    assert.deepEqual(selectClusters(items, { team: "a" }).map((c) => c.metadata.name), ["m", "a", "z"]);
    assert.deepEqual(selectClusters(items, { team: "a", unlabelled: true }).map((c) => c.metadata.name), [
      "m",
      "z",
    ]);
  });
});
