import type { HookConfig } from "../hook/mod.ts";
import type { KubeClient } from "../kube/mod.ts";

/** The parent a request is about, for the log line (never its body). */
export interface Subject {
  readonly kind: string;
  readonly namespace?: string | undefined;
  readonly name: string;
}

/** What the app gives every handler. */
export interface Runtime {
  readonly clock: () => Date;
  readonly clockOverride: boolean;
  readonly hookConfig: HookConfig;
  /** The API reader admission uses; absent where nothing reads the API (workers, most tests). */
  readonly kube?: KubeClient | undefined;
}

/** Hono environment of the hook service. */
export interface AppEnv {
  Variables: {
    runtime: Runtime;
    subject?: Subject;
    failure?: string;
  };
}
