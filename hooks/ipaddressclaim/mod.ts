/**
 * NetworkPools as Cluster API IPAM pools: the IPAddressClaim DecoratorController.
 *
 * @module
 */
export * from "./sync.ts";
export * from "./routes.ts";
