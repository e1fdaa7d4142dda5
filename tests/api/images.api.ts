/**
 * The install works as docs/install.md writes it: its `kustomize edit set image` run in each overlay of
 * `examples/kustomize/` (and in the base, for those who apply it alone), in a copy of the repository, leaves no
 * container image unset when the overlay is rendered: every Butler container runs the image that was set, the
 * reporter's included (a base's `images` would not reach a component an overlay adds).
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { ROOT } from "./cluster.ts";
import { kustomizeBinary } from "./tools.ts";

const IMAGE = "registry.example.com/platform/butler-hooks:0.1.0";

async function run(cmd: string, args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return text;
}

/** Every container image of a rendered kustomization, with the object it is in. */
function images(rendered: string): { where: string; image: string }[] {
  return parseAllDocuments(rendered).map((d) => d.toJS()).filter(Boolean).flatMap((o) => {
    const pod = o.spec?.template?.spec ?? o.spec?.jobTemplate?.spec?.template?.spec;
    const containers = [...(pod?.containers ?? []), ...(pod?.initContainers ?? [])];
    return containers.map((c: { name: string; image: string }) => ({
      where: `${o.kind}/${o.metadata?.name} ${c.name}`,
      image: c.image,
    }));
  });
}

Deno.test("the documented image command sets every image of every overlay", async (t) => {
  const kustomize = await kustomizeBinary();
  const overlays = [
    "manifests",
    ...[...Deno.readDirSync(`${ROOT}/examples/kustomize`)].filter((e) => e.isDirectory)
      .map((e) => `examples/kustomize/${e.name}`).sort(),
  ];
  for (const overlay of overlays) {
    await t.step(overlay, async () => {
      const copy = await Deno.makeTempDir({ prefix: "butler-images-" });
      try {
        await run("cp", ["-r", `${ROOT}/manifests`, `${ROOT}/examples`, copy], ROOT);
        // docs/install.md: (cd "$OVERLAY" && kustomize edit set image "butler-hooks=$REGISTRY/butler-hooks:$VERSION")
        await run(kustomize, ["edit", "set", "image", `butler-hooks=${IMAGE}`], `${copy}/${overlay}`);
        const found = images(await run("kubectl", ["kustomize", overlay], copy));
        assert.ok(found.length > 0, "the overlay runs containers");
        const ours = found.filter((f) => !f.image.includes("/") || f.image.includes("butler-hooks"));
        assert.deepEqual(
          ours.filter((f) => f.image !== IMAGE),
          [],
          "every Butler container runs the image set",
        );
        if (overlay.endsWith("production")) {
          assert.ok(
            found.some((f) => f.where.startsWith("Deployment/butler-reporter")),
            "the reporter is there",
          );
        }
      } finally {
        await Deno.remove(copy, { recursive: true });
      }
    });
  }
});
