/**
 * What every pure hook receives besides its request: the time the HTTP layer read once for this request, and
 * the validated configuration. Hooks read nothing else from the world.
 *
 * @module
 */

/** Configuration that reaches hook logic (never secrets, never I/O handles). */
export interface HookConfig {
  /** Prefix the API server adds to OIDC group names (`--oidc-groups-prefix`), used in RBAC subjects. */
  readonly oidcGroupsPrefix: string;
  /** Group prefix per identity provider (lowercased name), for groups whose Team entry names one. */
  readonly idpGroupPrefixes: Readonly<Record<string, string>>;
  /**
   * Tests only (`TEST_SHRINK_GRACE_SECONDS`): how long an unused elastic growth allocation is kept. Unset, the
   * seed's 10 minutes.
   */
  readonly shrinkGraceSeconds?: number;
}

/** The injected world of a hook call. */
export interface HookContext {
  /** The clock, read once per request by the HTTP layer. */
  readonly now: Date;
  /** Validated configuration. */
  readonly config: HookConfig;
}

/** The configuration used where none is given (tests, fixtures). */
export const DEFAULT_HOOK_CONFIG: HookConfig = Object.freeze({ oidcGroupsPrefix: "", idpGroupPrefixes: {} });
