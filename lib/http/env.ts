import type { HookConfig } from "../hook_context/mod.ts";
import type { KubeClient } from "../kube/mod.ts";
import type { Signal } from "../signals/mod.ts";
import type { HeapBudget } from "../foreign/mod.ts";
import type { PoisonNote, Subject } from "../isolation/mod.ts";

export type { Subject };

/** What the app gives every handler. */
export interface Runtime {
  readonly clock: () => Date;
  readonly clockOverride: boolean;
  readonly hookConfig: HookConfig;
  /** The API reader admission uses; absent where nothing reads the API (workers, most tests). */
  readonly kube?: KubeClient | undefined;
  /**
   * Whether admission may write what its decisions stage (the quota ledger, the pool registry): only when the API
   * server is authenticated (webhook client certificates); an unauthenticated caller's review writes nothing.
   * Written by default (tests, and the listener without webhooks apart).
   */
  readonly admissionWrites?: boolean | undefined;
  /** How long a hook's and a review's body may take to arrive (`BODY_READ_SECONDS` by default). */
  readonly bodyReadSeconds?: { readonly hooks: number; readonly webhooks: number } | undefined;
  /** What a body may cost the heap before it is parsed (the door of `lib/foreign`). */
  readonly heapBudget: HeapBudget;
  /**
   * Where a hook worker says which parent a call is about (so that a call that ends the worker is charged to it)
   * and learns whether that parent is poisoned ({@linkcode PoisonRegistry}); absent outside workers.
   */
  readonly poison?: {
    started(key: string): void;
    note(key: string, now: Date): PoisonNote | undefined;
  } | undefined;
}

/** The client certificate a TLS connection presented (set by the HTTPS listener when it asks for one). */
export interface Peer {
  /** Whether the certificate verified against the client CA. */
  readonly authorized: boolean;
  /** Why not, when not. */
  readonly reason?: string;
  /** The certificate's common name. */
  readonly subject?: string;
  /** When it expires, as the TLS layer prints it. */
  readonly validTo?: string;
}

/** Hono environment of the hook service. */
export interface AppEnv {
  /**
   * `listener`: which listener took the request, when the service runs one for admission webhooks apart;
   * `arrivedAt`: when its headers arrived (`performance.now()`), which its body's time is counted from;
   * `source`: the caller's address.
   */
  Bindings: { peer?: Peer; listener?: "hooks" | "webhooks"; arrivedAt?: number; source?: string };
  Variables: {
    runtime: Runtime;
    subject?: Subject;
    failure?: string;
    signals?: readonly Signal[];
    /** The request's body, as the door read it. */
    body?: ArrayBuffer;
  };
}
