/**
 * What the chart's values switch, as data: each feature is a kustomize component (or an example overlay's
 * patches) of `manifests/`, turned on by one value; each parameter is a literal of the rendered manifests that a
 * value replaces. The generator renders every feature with kustomize and turns the differences into templates,
 * so the chart says nothing the kustomize sources do not.
 *
 * @module
 */

/** One switch of the chart: a value and the kustomize source it stands for. */
export interface Feature {
  /** The values path, dotted (`reporter.enabled`). */
  readonly value: string;
  /** The value that turns it on: `true`, or `false` for a part of the base a component removes. */
  readonly on: boolean;
  /** A component under `manifests/components/`, or an example overlay (its patches) under the repository. */
  readonly component?: string;
  readonly overlay?: string;
  /** The comment values.yaml gives it. */
  readonly help: string;
}

/**
 * Every component of docs/install.md's decision table, in the order their patches apply (kustomize applies an
 * overlay's components in the order it lists them; the chart in this one).
 */
export const FEATURES: readonly Feature[] = [
  {
    value: "admissionWebhooks.enabled",
    on: false,
    component: "without-admission-webhooks",
    help:
      "The admission webhooks (quotas, environments, feature restrictions, deletes in use). false removes them, " +
      "their RBAC and the quota ledger's policy: never in production (docs/tenancy.md, what holds without them).",
  },
  {
    value: "reporter.enabled",
    on: true,
    component: "reporter",
    help: "The LoadBalancer reporter: needed for every ProviderConfig with network.mode: ipam.",
  },
  {
    value: "networkPolicy.enabled",
    on: true,
    component: "network-policy",
    help:
      "NetworkPolicies: hooks only from Metacontroller, metrics only from Prometheus, the webhook port only " +
      "from the API server's addresses (networkPolicy.apiServerCIDR). A managed control plane needs it.",
  },
  {
    value: "webhookClientAuth.enabled",
    on: true,
    component: "webhook-client-auth",
    help: "The API server authenticates to the webhooks with a client certificate: for a control plane you " +
      "configure (--admission-control-config-file). Race-free quotas at admission.",
  },
  {
    value: "monitoring.enabled",
    on: true,
    component: "monitoring",
    help:
      "ServiceMonitor, PodMonitor, PrometheusRule and the Grafana dashboard: needs prometheus-operator's CRDs.",
  },
  {
    value: "ipv6.enabled",
    on: true,
    component: "ipv6",
    help: "An IPv6-primary management cluster: listen on :: and name the API server in brackets.",
  },
  {
    value: "clusterApiIpam.enabled",
    on: true,
    component: "cluster-api-ipam",
    help: "NetworkPools answer Cluster API IPAddressClaims: needs Cluster API >= 1.11's IPAM CRDs.",
  },
  {
    value: "largePools.enabled",
    on: true,
    overlay: "examples/kustomize/large-pools",
    help: "Pools past 5,000 grants: an 80 MiB body limit and 1.5 GiB of memory for the hook service.",
  },
];

/** A literal of the rendered manifests that a value replaces, with the value's default (the literal itself). */
export interface Parameter {
  readonly value: string;
  /** Which literals: by the object's kind and name, and the literal's text. */
  readonly kind?: string;
  readonly name?: string;
  readonly matches: (text: string) => boolean;
  /** The Helm expression that gives it. */
  readonly expr: string;
  readonly help: string;
}

/** The image (every container's) and the API server's addresses in the network policies. */
export const PARAMETERS: readonly Parameter[] = [
  {
    value: "image.repository",
    matches: (text) => /^butler-hooks:[\w.-]+$/.test(text),
    expr: 'printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) | quote',
    help: "The hook service's and the reporter's image (build it with the Dockerfile; the release workflow " +
      "publishes it); image.tag defaults to the chart's appVersion.",
  },
  {
    value: "networkPolicy.apiServerCIDR",
    kind: "NetworkPolicy",
    matches: (text) => text === "192.0.2.1/32",
    expr: ".Values.networkPolicy.apiServerCIDR | quote",
    help:
      "The API server's addresses, which alone may reach the webhook port. The default (TEST-NET-1) admits " +
      "nothing: set yours.",
  },
  {
    value: "networkPolicy.egressCIDR",
    kind: "NetworkPolicy",
    name: "butler-hooks-egress",
    matches: (text) => text === "0.0.0.0/0",
    expr: ".Values.networkPolicy.egressCIDR | quote",
    help:
      "Where the hook service may connect (ports 443 and 6443): the API server's addresses. The default " +
      "allows any address on those ports.",
  },
];

/** Kinds whose objects `helm uninstall` leaves in place: deleting them would delete every Butler object. */
export const KEPT_KINDS: readonly string[] = ["CustomResourceDefinition", "Namespace"];

/** The helm annotation that keeps them. */
export const KEEP_ANNOTATION = "helm.sh/resource-policy";
