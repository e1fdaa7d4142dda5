/**
 * The MetalLB configuration of a tenant cluster, as the seeds define it: the `IPAddressPool default-pool` (one
 * `start-end` entry per Allocated load-balancer allocation, in address order) and the `L2Advertisement default`
 * in `metallb-system`. The TenantCluster hook writes them into its `{tc}-metallb` ConfigMap; the reporter applies
 * the same objects to the tenant by server-side apply, as upstream's controller does.
 *
 * @module
 */

/** MetalLB's namespace in the tenant. */
export const METALLB_NAMESPACE = "metallb-system";
/** The field manager upstream's controller applies with (`butler-controller/ipam`). */
export const METALLB_FIELD_MANAGER = "butler-controller/ipam";
/** MetalLB's API group and version of both objects. */
export const METALLB_API_VERSION = "metallb.io/v1beta1";

/** One object of the MetalLB configuration, and the tenant API path it is applied at. */
export interface MetalLBObject {
  readonly path: string;
  readonly body: Record<string, unknown>;
}

/**
 * The pool and its advertisement for `addresses` (`start-end` texts, as the TenantCluster's status lists them).
 *
 * @example
 * ```ts
 * metallbObjects(["10.40.2.0-10.40.2.1"])[0]!.path;
 * // "/apis/metallb.io/v1beta1/namespaces/metallb-system/ipaddresspools/default-pool"
 * ```
 */
export function metallbObjects(addresses: readonly string[]): MetalLBObject[] {
  const base = `/apis/${METALLB_API_VERSION}/namespaces/${METALLB_NAMESPACE}`;
  return [
    {
      path: `${base}/ipaddresspools/default-pool`,
      body: {
        apiVersion: METALLB_API_VERSION,
        kind: "IPAddressPool",
        metadata: { name: "default-pool", namespace: METALLB_NAMESPACE },
        spec: { addresses: [...addresses] },
      },
    },
    {
      path: `${base}/l2advertisements/default`,
      body: {
        apiVersion: METALLB_API_VERSION,
        kind: "L2Advertisement",
        metadata: { name: "default", namespace: METALLB_NAMESPACE },
        spec: { ipAddressPools: ["default-pool"] },
      },
    },
  ];
}
