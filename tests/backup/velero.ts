/**
 * The backup tier's outside programs, as their users run them: MinIO (an S3 object store on loopback, a bucket
 * made through its S3 API) and Velero's server (`velero server` run outside the cluster, as Velero's "Run
 * locally" page describes, with the AWS object-store plugin) against a test control plane, and the `velero` CLI.
 * This project builds none of them: `MINIO_BIN`, `VELERO_BIN` and `VELERO_PLUGIN_DIR` point at binaries built
 * from their Go modules elsewhere.
 *
 * @module
 */
import { createHash, createHmac } from "node:crypto";
import { freePort, kubectlOk, spawnLogged } from "../api/cluster.ts";
import { runCommand } from "../../lib/testing/mod.ts";

/** The object store: its URL and the credentials file Velero's AWS plugin reads. */
export interface ObjectStore {
  readonly url: string;
  readonly credentials: string;
  readonly process: Deno.ChildProcess;
}

const ACCESS = "butler-backup";
const SECRET = "butler-backup-secret";
/** The bucket the backups go to. */
export const BUCKET = "butler-backups";

const hex = (b: string | Buffer, key?: Buffer | string) =>
  key === undefined
    ? createHash("sha256").update(b).digest("hex")
    : createHmac("sha256", key).update(b).digest("hex");
const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data).digest();

/** PUT of a bucket, signed with AWS Signature Version 4 (what any S3 client sends to make one). */
async function makeBucket(url: string, bucket: string): Promise<void> {
  const host = new URL(url).host;
  const now = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
  const day = now.slice(0, 8);
  const payload = hex("");
  const signed = "host;x-amz-content-sha256;x-amz-date";
  const canonical =
    `PUT\n/${bucket}\n\nhost:${host}\nx-amz-content-sha256:${payload}\nx-amz-date:${now}\n\n${signed}\n${payload}`;
  const scope = `${day}/us-east-1/s3/aws4_request`;
  const toSign = `AWS4-HMAC-SHA256\n${now}\n${scope}\n${hex(canonical)}`;
  const key = hmac(hmac(hmac(hmac(`AWS4${SECRET}`, day), "us-east-1"), "s3"), "aws4_request");
  const res = await fetch(`${url}/${bucket}`, {
    method: "PUT",
    headers: {
      "x-amz-content-sha256": payload,
      "x-amz-date": now,
      authorization: `AWS4-HMAC-SHA256 Credential=${ACCESS}/${scope}, SignedHeaders=${signed}, Signature=${
        hex(toSign, key)
      }`,
    },
  });
  const body = await res.text();
  if (!res.ok && !body.includes("BucketAlreadyOwnedByYou")) {
    throw new Error(`make bucket: ${res.status} ${body}`);
  }
}

/** Starts MinIO on loopback with its data in `dir`, and makes the bucket. */
export async function startMinio(bin: string, dir: string): Promise<ObjectStore> {
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const process = spawnLogged(
    [
      bin,
      "server",
      `${dir}/data`,
      "--address",
      `127.0.0.1:${port}`,
      "--console-address",
      `127.0.0.1:${freePort()}`,
    ],
    `${dir}/minio.log`,
    { MINIO_ROOT_USER: ACCESS, MINIO_ROOT_PASSWORD: SECRET, MINIO_BROWSER: "off", HOME: dir },
  );
  for (let i = 0;; i++) {
    try {
      const res = await fetch(`${url}/minio/health/ready`);
      await res.body?.cancel();
      if (res.ok) break;
    } catch { /* not up yet */ }
    if (i > 120) throw new Error(`MinIO did not start (${dir}/minio.log)`);
    await new Promise((r) => setTimeout(r, 500));
  }
  await makeBucket(url, BUCKET);
  const credentials = `${dir}/credentials-velero`;
  Deno.writeTextFileSync(
    credentials,
    `[default]\naws_access_key_id=${ACCESS}\naws_secret_access_key=${SECRET}\n`,
  );
  return { url, credentials, process };
}

/** Runs the `velero` CLI against the control plane in `planeDir`; must succeed; returns stdout. */
export async function velero(bin: string, planeDir: string, args: readonly string[]): Promise<string> {
  const r = await runCommand(bin, [
    "--kubeconfig",
    `${planeDir}/kubeconfig`,
    "--namespace",
    "velero",
    ...args,
  ]);
  if (r.code !== 0) throw new Error(`velero ${args.join(" ")} failed (${r.code}): ${r.stderr}${r.stdout}`);
  return r.stdout;
}

/**
 * Velero on the control plane in `planeDir`: its CRDs (`velero install --crds-only`), namespace `velero`, the
 * backup storage location on the bucket, and `velero server` with the plugin directory, metrics and profiler on
 * loopback. Resolves once the location is Available.
 */
export async function startVelero(
  bin: string,
  pluginDir: string,
  planeDir: string,
  store: ObjectStore,
  log: string,
): Promise<Deno.ChildProcess> {
  // Velero's controller manager serves metrics on :8080 whatever its flags say: say so rather than fail later.
  try {
    Deno.listen({ port: 8080 }).close();
  } catch {
    throw new Error("port 8080 is taken: Velero's controller manager binds it (one Velero at a time)");
  }
  const crds = await velero(bin, planeDir, ["install", "--crds-only", "--dry-run", "-o", "yaml"]);
  await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: crds });
  await kubectlOk(["wait", "--for=condition=Established", "--timeout=60s", "crd", "-l", "component=velero"]);
  await kubectlOk(["create", "namespace", "velero"]);
  await kubectlOk(["apply", "--server-side", "-f", "-"], {
    stdin: JSON.stringify({
      apiVersion: "velero.io/v1",
      kind: "BackupStorageLocation",
      metadata: { name: "default", namespace: "velero" },
      spec: {
        provider: "aws",
        default: true,
        objectStorage: { bucket: BUCKET },
        config: { region: "minio", s3ForcePathStyle: "true", s3Url: store.url },
      },
    }),
  });
  const server = spawnLogged(
    [
      bin,
      "server",
      "--kubeconfig",
      `${planeDir}/kubeconfig`,
      "--namespace",
      "velero",
      "--plugin-dir",
      pluginDir,
      "--metrics-address",
      `127.0.0.1:${freePort()}`,
      "--profiler-address",
      `127.0.0.1:${freePort()}`,
      "--backup-sync-period",
      "5s",
      "--store-validation-frequency",
      "5s",
    ],
    log,
    // Its plugins (the velero binary itself among them) find the API server by KUBECONFIG, not by the flag.
    { AWS_SHARED_CREDENTIALS_FILE: store.credentials, HOME: planeDir, KUBECONFIG: `${planeDir}/kubeconfig` },
  );
  for (let i = 0;; i++) {
    const phase = await kubectlOk([
      "get",
      "backupstoragelocation",
      "default",
      "-n",
      "velero",
      "-o",
      "jsonpath={.status.phase}",
    ]);
    if (phase === "Available") return server;
    if (i > 120) throw new Error(`the backup location is not Available (${phase || "no phase"}); see ${log}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}
