/**
 * The heap a request may take before it is parsed: each body is charged what `jsonHeapEstimate` says its
 * parse can take (for Kubernetes objects about 2.5 times what it takes, which also covers the schemas' reading),
 * against a share of the isolate's heap limit less what the isolate already holds and what the requests in flight
 * were charged. A body that does not fit is
 * refused before a byte of it is parsed, so no body can carry an isolate to its limit, where V8 ends the process
 * (docs/architecture.md#no-request-can-end-the-process).
 *
 * @module
 */
import { getHeapStatistics } from "node:v8";
import { scanJson } from "./json_cost.ts";

/** The most any byte can be charged by `jsonHeapEstimate` (an `{`: a slot and an object). */
export const JSON_WORST_PER_BYTE = 88;

/** What a body was charged, to give back once its request is answered. */
export interface HeapCharge {
  readonly bytes: number;
  release(): void;
}

/** A body that does not fit, or is nested too deep to read. */
export interface HeapRefusal {
  /** What its parse could take (`Infinity`: more than `limit`). */
  readonly need: number;
  readonly available: number;
  /** The most requests may take at once. */
  readonly limit: number;
  /** Whether it could never fit, even in an empty heap (a 413), rather than not now (a 503). */
  readonly never: boolean;
  /** Nested deeper than `MAX_JSON_DEPTH`. */
  readonly tooDeep?: boolean;
}

/** The heap requests may take, shared by the requests in flight. */
export interface HeapBudget {
  /** Charges a body before it is parsed, or says why it cannot be. */
  charge(body: Uint8Array): HeapCharge | HeapRefusal;
  /** Bytes charged to requests in flight now. */
  readonly charged: number;
  /** The most requests may take at once, in bytes. */
  readonly limit: number;
}

/** What {@linkcode createHeapBudget} reads of the isolate; V8's own figures by default. */
export interface HeapBudgetOptions {
  /** The share of the heap limit that the isolate's own holdings and the requests in flight may reach (0–1). */
  readonly share?: number;
  /**
   * The most all requests in flight may be charged, whatever the heap has room for: a thread that holds more
   * than requests (the admission cache) keeps its room, and the process's resident memory its bound.
   */
  readonly maxInFlight?: number;
  /** The isolate's heap limit in bytes (`heap_size_limit`). */
  readonly heapLimit?: () => number;
  /** The heap the isolate holds now (`used_heap_size`). */
  readonly heapUsed?: () => number;
}

/**
 * Creates the heap budget of this isolate. A body that would fit even if every byte cost the most is charged so;
 * any other is scanned (`jsonParseCost`: its text and the value its parse builds), and refused when it nests past
 * `MAX_JSON_DEPTH` (deep nesting in a small body costs its parse little).
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
  const limitNow = () => Math.min(Math.floor(heapLimit() * share), options.maxInFlight ?? Infinity);
  let charged = 0;
  return {
    get charged() {
      return charged;
    },
    get limit() {
      return limitNow();
    },
    charge(body: Uint8Array): HeapCharge | HeapRefusal {
      const limit = limitNow();
      const room = Math.floor(heapLimit() * share) - heapUsed();
      const available = Math.max(0, Math.min(room, limit) - charged);
      // A body whose every byte could cost the most and still fit is charged so, unscanned: most are kilobytes.
      const worst = (JSON_WORST_PER_BYTE + 2) * body.length;
      if (worst <= available) return take(worst);
      // Else one scan, as far as the most a body could ever get: it says both "not now" and "never".
      const scan = scanJson(body, limit);
      const need = scan.tooDeep || !Number.isFinite(scan.cost)
        ? Infinity
        : scan.cost + body.length * (scan.wide ? 2 : 1);
      if (scan.tooDeep) return { need, available, limit, never: true, tooDeep: true };
      if (need > available) return { need, available, limit, never: need > limit };
      return take(need);
    },
  };

  function take(need: number): HeapCharge {
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
  }
}

/** Whether a charge was refused. */
export function isHeapRefusal(c: HeapCharge | HeapRefusal): c is HeapRefusal {
  return "need" in c;
}
