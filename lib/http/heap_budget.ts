/**
 * The heap a request may take before it is parsed: each body is charged what {@linkcode jsonHeapEstimate} says its
 * parse can take (for Kubernetes objects about 2.5 times what it takes, which also covers the schemas' reading),
 * against a share of the isolate's heap limit less what the isolate already holds and what the requests in flight
 * were charged. A body that does not fit is
 * refused before a byte of it is parsed, so no body can carry an isolate to its limit, where V8 ends the process
 * (docs/architecture.md, "No request can end the process").
 *
 * @module
 */
import { getHeapStatistics } from "node:v8";
import { jsonHeapEstimate } from "./json_cost.ts";

/** The most any byte can be charged by {@linkcode jsonHeapEstimate} (an `{`: a slot and an object). */
export const JSON_WORST_PER_BYTE = 88;

/** What a body was charged, to give back once its request is answered. */
export interface HeapCharge {
  readonly bytes: number;
  release(): void;
}

/** A body that does not fit: what it would need (`Infinity`: more than `limit`) and what was there. */
export interface HeapRefusal {
  readonly need: number;
  readonly available: number;
  /** What requests may take in all. */
  readonly limit: number;
  /** Whether it could never fit, even in an empty heap (a 413), rather than not now (a 503). */
  readonly never: boolean;
}

/** The heap requests may take, shared by the requests in flight. */
export interface HeapBudget {
  /** Charges a body before it is parsed, or says why it cannot be. */
  charge(body: Uint8Array): HeapCharge | HeapRefusal;
  /** Bytes charged to requests in flight now. */
  readonly charged: number;
  /** The share of the heap limit requests may take in all, in bytes. */
  readonly limit: number;
}

/** What {@linkcode createHeapBudget} reads of the isolate; V8's own figures by default. */
export interface HeapBudgetOptions {
  /** The share of the heap limit that the isolate's own holdings and the requests in flight may reach (0–1). */
  readonly share?: number;
  /** The isolate's heap limit in bytes (`heap_size_limit`). */
  readonly heapLimit?: () => number;
  /** The heap the isolate holds now (`used_heap_size`). */
  readonly heapUsed?: () => number;
}

/**
 * Creates the heap budget of this isolate.
 *
 * @example
 * ```ts
 * const budget = createHeapBudget({ share: 0.75 });
 * const charge = budget.charge(bytes);
 * if ("release" in charge) {
 *   try { JSON.parse(new TextDecoder().decode(bytes)); } finally { charge.release(); }
 * }
 * ```
 */
export function createHeapBudget(options: HeapBudgetOptions = {}): HeapBudget {
  const share = options.share ?? 0.75;
  const heapLimit = options.heapLimit ?? (() => getHeapStatistics().heap_size_limit);
  const heapUsed = options.heapUsed ?? (() => getHeapStatistics().used_heap_size);
  let charged = 0;
  return {
    get charged() {
      return charged;
    },
    get limit() {
      return Math.floor(heapLimit() * share);
    },
    charge(body: Uint8Array): HeapCharge | HeapRefusal {
      const limit = Math.floor(heapLimit() * share);
      const available = Math.max(0, limit - heapUsed() - charged);
      // A body that cannot need more than what is there is not scanned: most are a few kilobytes.
      const worst = JSON_WORST_PER_BYTE * body.length;
      const need = worst <= available ? worst : jsonHeapEstimate(body, available);
      if (need > available) {
        const alone = jsonHeapEstimate(body, limit);
        return { need: alone, available, limit, never: alone > limit };
      }
      charged += need;
      let released = false;
      return {
        bytes: need,
        release() {
          if (released) return;
          released = true;
          charged -= need;
        },
      };
    },
  };
}

/** Whether a charge was refused. */
export function isHeapRefusal(c: HeapCharge | HeapRefusal): c is HeapRefusal {
  return "need" in c;
}
