/**
 * The krew plugin manifest of `kubectl butler`: one archive (the launcher, the plugin's sources and the Deno
 * lockfile) for every platform where Deno and a POSIX shell run.
 *
 * @module
 */
import { stringify } from "yaml";

/** The platforms the plugin supports: those Deno 2.9.6 ships for, with a POSIX shell for the launcher. */
export const KREW_PLATFORMS: readonly { os: string; arch: string }[] = [
  { os: "linux", arch: "amd64" },
  { os: "linux", arch: "arm64" },
  { os: "darwin", arch: "amd64" },
  { os: "darwin", arch: "arm64" },
];

/** What a release gives the manifest. */
export interface KrewRelease {
  /** `0.2.0` (the manifest says `v0.2.0`). */
  readonly version: string;
  /** Where the archive is downloaded from, and its SHA-256 (hex). */
  readonly uri: string;
  readonly sha256: string;
  readonly homepage: string;
}

/**
 * The manifest (`butler.yaml`, as krew-index names it by the plugin).
 *
 * @example
 * ```ts
 * krewManifest({ version: "0.2.0", uri: "https://example.com/p.tar.gz", sha256: "ab...", homepage: "https://example.com" });
 * ```
 */
export function krewManifest(release: KrewRelease): string {
  return stringify({
    apiVersion: "krew.googlecontainertools.github.com/v1alpha2",
    kind: "Plugin",
    metadata: { name: "butler" },
    spec: {
      version: `v${release.version}`,
      homepage: release.homepage,
      shortDescription: "Manage Butler teams, environments, tenant clusters and IP pools",
      description:
        "Butler's kubectl plugin: a Team's environments (list, add, remove, migrate clusters between " +
        "them), creating a TenantCluster with the shape it will get, a NetworkPool's grants as a picture, a " +
        "Team's quota usage, a pool's ledger, and an offline plan of what admission and the controllers will do " +
        "with a folder of manifests.",
      caveats:
        "The plugin runs on Deno 2.9.6: it uses the deno on PATH, or `npx -y deno@2.9.6` (Node.js) when " +
        "there is none; its npm dependencies are fetched once, pinned by the lockfile it carries.",
      platforms: KREW_PLATFORMS.map((p) => ({
        selector: { matchLabels: p },
        uri: release.uri,
        sha256: release.sha256,
        bin: "kubectl-butler",
        files: [{ from: "*", to: "." }],
      })),
    },
  }, { lineWidth: 0 });
}
