/**
 * The help of `kubectl butler` and each of its commands, with examples; `{name}` is the name it was run as.
 *
 * @module
 */

/** kubectl's connection and output flags, which every command takes. */
export const GLOBAL_HELP = `Global flags (as kubectl's):
      --kubeconfig PATH   the kubeconfig (default: KUBECONFIG, then ~/.kube/config)
      --context NAME      the context to use
  -n, --namespace NS      the namespace (default: the context's)
      --as USER           impersonate USER; --as-group GROUP adds a group (one)
  -o, --output FORMAT     text (default), json or yaml for scripts
  -h, --help              this help`;

/** Help by command (`""` the plugin's, `"env migrate"` a command's). */
export const HELP: Record<string, string> = {
  "": `Butler's kubectl plugin (also installed as butleradm, the name admission's messages use).

Usage: {name} <command> [flags]

Commands:
  env list       a Team's environments with their limits, clusters and usage
  env add        add an environment to a Team
  env remove     remove an environment from a Team (refused while clusters use it)
  env migrate    move TenantClusters to another environment (label and migration annotation together)
  cluster create create a TenantCluster in a Team's environment, showing the shape it will get first
  pool show      a picture of a NetworkPool: its address space, figures and grants
  team usage     a Team's quota as bars: clusters, nodes, CPU, memory, storage, environments, members
  ledger         a NetworkPool's ledger: its grants in address order, or the patch for a downgrade
  adopt          after a restore: Butler's namespaces, RBAC, ConfigMaps and claims' objects given back to their parents
  plan           what admission and the controllers will do with a folder of manifests (offline)
  version        this plugin's version

Run "{name} <command> --help" for a command's flags and examples.

${GLOBAL_HELP}`,
  env: `Environments of a Team.

Usage: {name} env list|add|remove|migrate ...

Commands:
  list           a Team's environments with their limits, clusters and usage
  add            add an environment to a Team
  remove         remove an environment from a Team
  migrate        move TenantClusters to another environment`,
  "env list":
    `A Team's environments: their limits, clusters, use of the cluster limit, and the quota verdict the Team
controller gives them (its own measures, from the clusters as they are now).

Usage:
  {name} env list --team TEAM [-o text|json]

Examples:
  {name} env list --team payments

${GLOBAL_HELP}`,
  "env add":
    `Add an environment to a Team: one update of the Team, decided by the API server's policies (who may change
environments and their limits).

Usage:
  {name} env add ENV --team TEAM [--description TEXT] [--max-clusters N] [--max-clusters-per-member N] [--dry-run]

Examples:
  {name} env add staging --team payments --description "Release candidates" --max-clusters 4

${GLOBAL_HELP}`,
  "env remove":
    `Remove an environment from a Team. Refused, before anything is sent and in the Team webhook's words, while
TenantClusters use it: migrate or delete them first (env migrate).

Usage:
  {name} env remove ENV --team TEAM [--dry-run]

Examples:
  {name} env remove staging --team payments

${GLOBAL_HELP}`,
  cluster: `TenantClusters.

Usage: {name} cluster create NAME ...

Commands:
  create         create a TenantCluster in a Team's environment`,
  "cluster create":
    `Create a TenantCluster in a Team (and environment), as the seeds' "butlerctl cluster --environment": you
are its creator-email (from a SelfSubjectReview: who the API server says you are), and the shape it will get is
shown first, each value with its source (given, environment, team, platform, default), as the controller will
resolve it. Only the fields you give are set; admission decides (quota, environment access, per-member cap).

Usage:
  {name} cluster create NAME --team TEAM [--environment ENV] [--version V] [--workers N] [--cpu Q]
      [--memory Q] [--disk Q] [--provider PROVIDERCONFIG] [--dry-run] [-o text|json]

Examples:
  {name} cluster create web-2 --team payments --environment dev
  {name} cluster create api --team payments --environment prod --workers 5 --cpu 8 --memory 32Gi --dry-run

${GLOBAL_HELP}`,
  pool: `NetworkPools.

Usage: {name} pool show POOL ...

Commands:
  show           a picture of a NetworkPool`,
  "pool show":
    `A picture of a NetworkPool: its address space as a grid of cells (each marked by what its addresses
are), the figures its controller reports (utilisation, largest free block, fragmentation), and every grant with
its tenant (from the IPAllocations you may list).

Usage:
  {name} pool show POOL [-n NAMESPACE] [-o text|json|svg] [--svg FILE]

Flags:
  -n, --namespace NS      the pool's namespace (default butler-system)
  -o, --output FORMAT     text (default), json or yaml for scripts, svg for a picture on standard output
      --svg FILE          also write the picture as SVG to FILE (under the current directory)

Examples:
  {name} pool show lab-pool
  {name} pool show lab-pool --svg lab-pool.svg
  {name} pool show lab-pool -o json | jq '.grants | length'

${GLOBAL_HELP}`,
  team: `Teams.

Usage: {name} team usage TEAM ...

Commands:
  usage          a Team's quota as bars`,
  "team usage":
    `A Team's quota as bars: clusters, worker nodes, CPU, memory and storage against its limits, each
environment's clusters, each member's clusters where an environment caps them, and each ProviderConfig's per-team
limits. Judged by the Team controller's own rules (80 % near limit, above 100 % over limit), from the clusters as
they are now.

Usage:
  {name} team usage TEAM [-o text|json]

Examples:
  {name} team usage payments
  {name} team usage payments -o json | jq '.measures[] | select(.state != "OK")'

${GLOBAL_HELP}`,
  ledger:
    `A NetworkPool's ledger: a table of its grants in address order (first and last address, count, when,
the IPAllocation's UID), -o json for scripts, or --v1: the status patch that writes the ledger in the first format
(version 0.1), for a downgrade. From the API, or from a file (-f; YAML or JSON, a List too; - for standard input).

Usage:
  {name} ledger POOL [-n NAMESPACE] [-o text|json] [--v1]
  {name} ledger -f FILE [-o text|json] [--v1]

Examples:
  {name} ledger lab-pool
  kubectl get np -A -o yaml | {name} ledger -f -

${GLOBAL_HELP}`,
  adopt: `After a restore (Velero, or any tool that recreates objects): Butler's children given back to their
parents. A restore drops owner references and gives every Team, TenantCluster and IPAddressClaim a new UID, so
Metacontroller no longer manages their namespaces, RBAC, quotas, MetalLB ConfigMaps and claims' IPAllocations and
IPAddresses. Each orphan is matched to its parent by the labels Butler gives it (the Team's or TenantCluster's name,
the claim's name), never by UID: a composite's child gets the label controller-uid of its parent's new UID (then
Metacontroller adopts it), a claim's object its claim as controller. Objects that have a controller, or name no
parent that exists, are left alone. Idempotent: run it again after a conflict. Needs to read every kind above and
update Butler's children (cluster-admin on the management cluster).

Usage:
  {name} adopt [--dry-run] [-o text|json|yaml]

Examples:
  {name} adopt --dry-run
  {name} adopt

${GLOBAL_HELP}`,
  version: `This plugin's version (the Butler release it belongs to); it reads no cluster.

Usage:
  {name} version [-o text|json|yaml]

Examples:
  {name} version
  {name} version -o json

${GLOBAL_HELP}`,
  plan:
    `What admission and the controllers will do with a folder of manifests, offline: see "{name} plan --help"
(the flags are plan's own; docs/plan-and-plugin.md#plan-before-you-sync).`,
  "env migrate": `Move TenantClusters to another environment, as the seeds' contract asks: one update sets the
environment label and the migration annotation together, a second removes the annotation. Each cluster is
decided by admission on its own (quota, per-member cap, environment access, unknown environment): a refusal of
one does not stop the others, and the summary says which moved and why the others did not.

Usage:
  {name} env migrate CLUSTER... --to ENV [-n NAMESPACE] [--dry-run]
  {name} env migrate --team TEAM (--selector SELECTOR | --unlabelled) --to ENV [--dry-run]

Flags:
      --to ENV            the environment to move to (required)
      --team TEAM         every cluster of TEAM (in its namespace team-TEAM, or -n) that the selection takes
  -l, --selector SEL      with --team: a label selector
      --unlabelled        with --team: clusters without an environment label
      --dry-run           ask admission without changing anything (a server-side dry run of the same update)

Examples:
  {name} env migrate web-1 web-2 --to production -n team-payments
  {name} env migrate --team payments --unlabelled --to development --dry-run
  {name} env migrate --team payments -l tier=frontend --to staging -o json

${GLOBAL_HELP}`,
};
