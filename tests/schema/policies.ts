/**
 * The shipped admission policies judged offline for a create by the platform admin `plan` applies as, in the
 * object's namespace as a Team makes it (labelled with its team): what the corpus and the examples tests compare.
 */
import { PLAN_USER, readInstall } from "../../lib/plan/mod.ts";
import {
  admissionPolicies,
  crdKinds,
  firstDenial,
  type KindSchema,
  type ManifestObject,
  type PolicyDenial,
} from "../../lib/schema/mod.ts";

const INSTALL = readInstall(new URL("../../", import.meta.url).pathname);
const POLICIES = admissionPolicies(INSTALL);

/** The install's served kinds, with their schemas. */
export const KINDS: ReadonlyMap<string, KindSchema> = crdKinds(INSTALL);

/** The first shipped policy that refuses a create of `object` (of `kind`, or its own served kind) by a platform admin. */
export function platformAdminDenial(object: ManifestObject, kind?: KindSchema): PolicyDenial | undefined {
  const k = kind ?? KINDS.get(`${object.apiVersion}/${object.kind}`)!;
  const ns = object.metadata.namespace;
  const team = ns?.startsWith("team-") ? { "butler.butlerlabs.dev/team": ns.slice(5) } : {};
  return firstDenial(POLICIES, {
    operation: "CREATE",
    group: k.group,
    version: k.version,
    resource: k.plural,
    kind: k.kind,
    object,
    ...(ns ? { namespaceObject: { metadata: { name: ns, labels: team } } } : {}),
    userInfo: PLAN_USER,
    schema: k.schema,
  });
}
