import { TeamSpec } from "../../lib/api/mod.ts";
import type { PolicyTwin } from "../../lib/plan/mod.ts";
import { effectiveAccess } from "./access.ts";

/**
 * `butler-team-access` (manifests/admission/team-access.yaml) for the plan: environment access may only name
 * the team's own users and groups. The policy checks users, then groups, and reports the first stray entry.
 */
export const TEAM_ACCESS_POLICY: PolicyTwin = {
  name: "butler-team-access",
  kind: "Team",
  reason: "Invalid",
  check: (_, object) => {
    const spec = TeamSpec.safeParse(object.spec);
    if (!spec.success) return undefined;
    const access = effectiveAccess(spec.data);
    if (access.ok) return undefined;
    return access.problems.find((p) => p.includes("].access.users[")) ?? access.problems[0];
  },
};
