/**
 * Signals: what a hook or an admission decision tells the service besides its answer. A pure function derives
 * them from the request and the response it checked; the service's adapters turn them into Prometheus series
 * and Kubernetes Events. They never change the answer, and an adapter that fails never fails the call.
 *
 * @module
 */

/** The object an Event is about (`involvedObject` of a core/v1 Event). */
export interface EventSubject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string | undefined;
  readonly name: string;
  readonly uid: string;
}

/** A Kubernetes Event to record once. */
export interface EventSignal {
  readonly signal: "event";
  readonly regarding: EventSubject;
  readonly type: "Normal" | "Warning";
  readonly reason: string;
  readonly message: string;
}

/** A NetworkPool's figures after a sync; `gone` when the pool was finalized (its series are dropped). */
export interface PoolSignal {
  readonly signal: "pool";
  readonly namespace: string;
  readonly name: string;
  readonly gone?: boolean;
  readonly totalIPs?: number;
  readonly allocatedIPs?: number;
  readonly availableIPs?: number;
  readonly largestFreeBlock?: number;
  readonly allocationCount?: number;
  readonly fragmentationPercent?: number;
  /** IPAllocations of the pool not granted at this sync (those `status.failures` records). */
  readonly pendingAllocations?: number;
  /** Released addresses cooling down (`status.coolingIPs`). */
  readonly coolingIPs?: number;
  /** Grants released since the pool was created (`status.releases.total`). */
  readonly releasedGrants?: number;
}

/** A Team's quota utilisation in percent, by dimension (only dimensions with a limit); `gone` when finalized. */
export interface TeamSignal {
  readonly signal: "team";
  readonly name: string;
  readonly gone?: boolean;
  readonly utilization?: Readonly<Record<string, number>>;
  /** Per environment with a cluster limit: its clusters over that limit, in percent. */
  readonly environments?: Readonly<Record<string, number>>;
  readonly quotaStatus?: string;
}

/** An admission webhook refused a request, for each rule that failed. */
export interface DenialSignal {
  readonly signal: "denial";
  readonly webhook: string;
  readonly rules: readonly string[];
}

/**
 * How old a TenantCluster's LoadBalancerInventory was when the TenantCluster synced, and the age past which it
 * decides nothing; `gone` when finalized.
 */
export interface InventorySignal {
  readonly signal: "inventory";
  readonly namespace: string;
  readonly name: string;
  readonly gone?: boolean;
  readonly ageSeconds?: number;
  readonly maxAgeSeconds?: number;
}

/** Every signal. */
export type Signal = EventSignal | PoolSignal | TeamSignal | DenialSignal | InventorySignal;
