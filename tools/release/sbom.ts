/**
 * A CycloneDX 1.5 SBOM of `deno.lock`: every npm package the lockfile pins, with its integrity hash, as the
 * dependencies of the release. Pure: the same lockfile and release give the same document.
 *
 * @module
 */

/** The parts of a Deno lockfile (version 5) this reads. */
export interface DenoLock {
  readonly npm?: Record<string, { integrity?: string; dependencies?: string[] }>;
  readonly specifiers?: Record<string, string>;
}

const HASH_ALG: Record<string, string> = {
  sha512: "SHA-512",
  sha384: "SHA-384",
  sha256: "SHA-256",
  sha1: "SHA-1",
};

/** `name@version` (`@scope/name@version` too) split. */
function split(id: string): { name: string; version: string } {
  const at = id.lastIndexOf("@");
  return { name: id.slice(0, at), version: id.slice(at + 1).replace(/_.*$/, "") };
}

const purl = (name: string, version: string) =>
  `pkg:npm/${name.startsWith("@") ? `%40${name.slice(1)}` : name}@${version}`;

/** Hex of a base64 digest. */
function hex(b64: string): string {
  return [...atob(b64)].map((c) => c.charCodeAt(0).toString(16).padStart(2, "0")).join("");
}

/**
 * The SBOM, as a JSON value. `timestamp` is the release's (SOURCE_DATE_EPOCH in the workflow).
 *
 * @example
 * ```ts
 * lockSbom(JSON.parse(Deno.readTextFileSync("deno.lock")), { name: "butler", version: "0.2.0", timestamp: "2026-01-01T00:00:00Z" });
 * ```
 */
export function lockSbom(
  lock: DenoLock,
  release: { name: string; version: string; timestamp: string },
): Record<string, unknown> {
  const packages = Object.entries(lock.npm ?? {}).sort(([a], [b]) => a < b ? -1 : 1);
  const refOf = new Map(packages.map(([id]) => {
    const { name, version } = split(id);
    return [id, purl(name, version)];
  }));
  const byName = new Map(packages.map(([id]) => [split(id).name, id]));
  const direct = Object.values(lock.specifiers ?? {}).length
    ? Object.keys(lock.specifiers ?? {}).map((s) => s.replace(/^npm:/, "").replace(/@[^@]*$/, ""))
      .map((name) => byName.get(name)).filter((id): id is string => id !== undefined)
    : [];
  const root = `pkg:generic/${release.name}@${release.version}`;
  return {
    bomFormat: "CycloneDX",
    specVersion: "1.5",
    version: 1,
    metadata: {
      timestamp: release.timestamp,
      component: { type: "application", "bom-ref": root, name: release.name, version: release.version },
      tools: { components: [{ type: "application", name: "butler tools/release.ts sbom" }] },
    },
    components: packages.map(([id, entry]) => {
      const { name, version } = split(id);
      const [alg, digest] = (entry.integrity ?? "").split("-", 2);
      return {
        type: "library",
        "bom-ref": refOf.get(id),
        name,
        version,
        purl: refOf.get(id),
        ...(alg && digest && HASH_ALG[alg] ? { hashes: [{ alg: HASH_ALG[alg], content: hex(digest) }] } : {}),
      };
    }),
    dependencies: [
      { ref: root, dependsOn: direct.map((id) => refOf.get(id)!) },
      ...packages.map(([id, entry]) => ({
        ref: refOf.get(id),
        dependsOn: (entry.dependencies ?? []).map((d) => byName.get(d.replace(/@[^@]*$/, "") || d) ?? d)
          .map((d) => refOf.get(d)).filter((r): r is string => r !== undefined),
      })),
    ],
  };
}
