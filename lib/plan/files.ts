import { parseAllDocuments } from "yaml";
import type { Obj } from "./store.ts";

/**
 * The largest manifest file `plan` reads: the API server's limit on one request (3 MiB). A larger file is
 * reported and not read.
 */
export const MAX_FILE_BYTES = 3 * 1024 * 1024;

/** What `plan` reads over all its files (inputs and `--live`) in one run; files past it are reported, not read. */
export const MAX_RUN_BYTES = 32 * 1024 * 1024;

/** One manifest file of an input: its text, or why it was not read. */
export interface InputFile {
  /** The path as found below the argument (`-` for standard input). */
  readonly path: string;
  readonly text?: string;
  readonly problem?: string;
}

const MANIFEST_NAME = /\.(ya?ml|json)$/;

/** The path of `child` below `root` (both absolute, resolved), or undefined when it is not below it. */
function below(root: string, child: string): string | undefined {
  if (child === root) return "";
  const prefix = root.endsWith("/") ? root : `${root}/`;
  return child.startsWith(prefix) ? child.slice(prefix.length) : undefined;
}

function kindOf(info: Deno.FileInfo): string {
  if (info.isDirectory) return "a directory";
  if (info.isFifo) return "a named pipe";
  if (info.isCharDevice || info.isBlockDevice) return "a device";
  if (info.isSocket) return "a socket";
  return "not a regular file";
}

/**
 * Why `path` (found below the folder `root`, resolved) may not be read, or undefined: it must resolve (through
 * symbolic links) to a regular file inside `root`, in no hidden folder, of at most {@linkcode MAX_FILE_BYTES}.
 */
function refusal(root: string, path: string): { problem: string } | { real: string } {
  let real: string;
  try {
    real = Deno.realPathSync(path);
  } catch {
    return { problem: "cannot be read: a broken symbolic link or no permission" };
  }
  const inside = below(root, real);
  if (inside === undefined || inside.split("/").some((p) => p.startsWith("."))) {
    return {
      problem: "not read: a symbolic link that leads outside the folder given (or into a hidden folder)",
    };
  }
  const info = Deno.statSync(real);
  if (!info.isFile) return { problem: `not read: ${kindOf(info)}, not a regular file` };
  if (info.size > MAX_FILE_BYTES) {
    return { problem: `not read: ${info.size} bytes, over plan's bound of ${MAX_FILE_BYTES} bytes per file` };
  }
  return { real };
}

/** Reads at most `max` bytes of an open file or stream; `undefined` when it holds more. */
async function readBounded(stream: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > max) {
      await stream.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(chunk);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/**
 * Reads the manifest files of the arguments as `plan` takes a repository's files: every `.yaml`, `.yml` and
 * `.json` file below a folder (as {@linkcode manifestFiles}), a file, or `-` for standard input. Only regular
 * files inside the folder given (for a file argument, the folder it is in) are read, through symbolic links too,
 * each of at most {@linkcode MAX_FILE_BYTES} and all of at most {@linkcode MAX_RUN_BYTES}; any other entry (a
 * link out of the folder, a device, a named pipe, a broken link) is returned with its problem and not opened.
 * `spent` carries the bytes read over calls of one run. Throws only when an argument itself does not exist.
 */
export async function readInputFiles(
  paths: readonly string[],
  spent: { bytes: number } = { bytes: 0 },
): Promise<InputFile[]> {
  const out: InputFile[] = [];
  for (const arg of paths) {
    if (arg === "-") {
      const bytes = await readBounded(
        Deno.stdin.readable,
        Math.min(MAX_FILE_BYTES, MAX_RUN_BYTES - spent.bytes),
      );
      if (!bytes) out.push({ path: "-", problem: `not read: over plan's bound of ${MAX_FILE_BYTES} bytes` });
      else {
        spent.bytes += bytes.length;
        out.push({ path: "-", text: new TextDecoder().decode(bytes) });
      }
      continue;
    }
    const isDir = Deno.statSync(arg).isDirectory;
    const root = Deno.realPathSync(isDir ? arg : arg.replace(/\/?[^/]*$/, "") || ".");
    for (const path of isDir ? manifestFiles(arg) : [arg]) {
      const checked = refusal(root, path);
      if ("problem" in checked) {
        out.push({ path, problem: checked.problem });
        continue;
      }
      const info = Deno.statSync(checked.real);
      if (spent.bytes + info.size > MAX_RUN_BYTES) {
        out.push({ path, problem: `not read: plan's bound of ${MAX_RUN_BYTES} bytes per run is spent` });
        continue;
      }
      const file = Deno.openSync(checked.real);
      const bytes = await readBounded(file.readable, MAX_FILE_BYTES);
      if (!bytes) {
        out.push({ path, problem: `not read: over plan's bound of ${MAX_FILE_BYTES} bytes per file` });
        continue;
      }
      spent.bytes += bytes.length;
      out.push({ path, text: new TextDecoder().decode(bytes) });
    }
  }
  return out;
}

/**
 * The manifest files of a path: the file itself, or every `.yaml`, `.yml` and `.json` file below a directory
 * (sorted, recursively; `kustomization.yaml` and hidden files and folders such as `.github/` left out), or `-`
 * for standard input. Links to folders are not walked; links to files are listed (readers check where they lead).
 */
export function manifestFiles(path: string): string[] {
  if (path === "-") return ["-"];
  if (!Deno.statSync(path).isDirectory) return [path];
  return [...Deno.readDirSync(path)].sort((a, b) => (a.name < b.name ? -1 : 1)).flatMap((e) => {
    if (e.name.startsWith(".")) return [];
    const child = `${path.replace(/\/$/, "")}/${e.name}`;
    // A link to a folder is not followed (as kubectl's walk does not): only real folders are walked.
    if (e.isDirectory && !e.isSymlink) return manifestFiles(child);
    return MANIFEST_NAME.test(e.name) && e.name !== "kustomization.yaml" ? [child] : [];
  });
}

/**
 * The parts of `manifests/` a plan runs: namespaces, CRDs, controllers, the admission policies and the admission
 * webhooks.
 */
export const INSTALL_PATHS: readonly string[] = [
  "manifests/namespace.yaml",
  "manifests/crds",
  "manifests/admission",
  "manifests/controllers",
  "manifests/admission-webhooks/webhooks.yaml",
];

/**
 * Reads the install a plan runs from the project directory `root` (ending in `/`).
 *
 * @example
 * ```ts
 * const install = readInstall(new URL("../../", import.meta.url).pathname);
 * ```
 */
export function readInstall(root: string): Obj[] {
  return INSTALL_PATHS.flatMap((p) => manifestFiles(`${root}${p}`)).flatMap((file) =>
    parseAllDocuments(Deno.readTextFileSync(file)).map((d) => d.toJS() as Obj).filter(Boolean)
  );
}
