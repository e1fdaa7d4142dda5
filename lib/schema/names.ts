/**
 * The name and key rules of `k8s.io/apimachinery` (`pkg/api/validate/content`, `pkg/api/validation/path`), with
 * their messages: DNS-1123 labels and subdomains, DNS-1035 labels, qualified names (label and annotation keys,
 * finalizers), label values and path segment names. Each returns the messages of what is wrong, none when valid.
 *
 * @module
 */

const LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const SUBDOMAIN = `${LABEL}(\\.${LABEL})*`;
const DNS1035 = "[a-z]([-a-z0-9]*[a-z0-9])?";
const QUALIFIED = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE = `(${QUALIFIED})?`;

const whole = (re: string) => new RegExp(`^${re}$`);
const LABEL_RE = whole(LABEL);
const SUBDOMAIN_RE = whole(SUBDOMAIN);
const DNS1035_RE = whole(DNS1035);
const QUALIFIED_RE = whole(QUALIFIED);
const LABEL_VALUE_RE = whole(LABEL_VALUE);

/** The length Go's `len` gives a string: its UTF-8 bytes. */
export function byteLength(s: string): number {
  return new TextEncoder().encode(s).length;
}

/**
 * `must be no more than N bytes` (`content.MaxLenError`: label keys and values, annotation keys, finalizers), or
 * `... characters` (`validation.MaxLenError`: the name rules), as Kubernetes 1.35 words each.
 */
export function maxLenError(n: number, unit: "bytes" | "characters" = "bytes"): string {
  return `must be no more than ${n} ${unit}`;
}

/** A regex failure with examples, as `content.RegexError` words it. */
export function regexError(message: string, re: string, ...examples: string[]): string {
  if (!examples.length) return `${message} (regex used for validation is '${re}')`;
  return `${message} (e.g. ${
    examples.map((e) => `'${e}', `).join(" or ")
  }regex used for validation is '${re}')`;
}

/**
 * A DNS-1123 label (a Namespace's name): at most 63 bytes of `[a-z0-9-]`, alphanumeric at both ends.
 *
 * @example
 * ```ts
 * isDNS1123Label("a.b"); // ["must not contain dots"]
 * ```
 */
export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63, "characters"));
  if (!LABEL_RE.test(value)) {
    errs.push(
      SUBDOMAIN_RE.test(value) ? "must not contain dots" : regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        LABEL,
        "my-name",
        "123-abc",
      ),
    );
  }
  return errs;
}

/**
 * A DNS-1123 subdomain (the name of a custom resource, a Secret, a ConfigMap): at most 253 bytes of labels joined
 * by dots.
 *
 * @example
 * ```ts
 * isDNS1123Subdomain("web.shop"); // []
 * ```
 */
export function isDNS1123Subdomain(value: string, unit: "bytes" | "characters" = "characters"): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 253) errs.push(maxLenError(253, unit));
  if (!SUBDOMAIN_RE.test(value)) {
    errs.push(regexError(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
      SUBDOMAIN,
      "example.com",
    ));
  }
  return errs;
}

/** A DNS-1035 label (a Service's name): a DNS-1123 label that starts with a letter. */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63, "characters"));
  if (!DNS1035_RE.test(value)) {
    errs.push(regexError(
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
      DNS1035,
      "my-name",
      "abc-123",
    ));
  }
  return errs;
}

const prefixed = (prefix: string, msgs: readonly string[]) => msgs.map((m) => prefix + m);

/** What a qualified name's name part must be, with kube's examples. */
const QUALIFIED_WORDS = regexError(
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  QUALIFIED,
  "MyName",
  "my.name",
  "123-abc",
);

/**
 * A qualified name (a label or annotation key, a finalizer): an optional DNS subdomain prefix and `/`, then at most
 * 63 bytes of `[-A-Za-z0-9_.]`, alphanumeric at both ends.
 *
 * @example
 * ```ts
 * isQualifiedName("example.com/MyName"); // []
 * ```
 */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split("/");
  let name: string;
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (!prefix.length) errs.push("prefix part must be non-empty");
    else errs.push(...prefixed("prefix part ", isDNS1123Subdomain(prefix, "bytes")));
  } else {
    return [
      `a valid label key ${QUALIFIED_WORDS} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (!name.length) errs.push("name part must be non-empty");
  else if (byteLength(name) > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!QUALIFIED_RE.test(name)) errs.push(`name part ${QUALIFIED_WORDS}`);
  return errs;
}

/**
 * A label value: empty, or at most 63 bytes of `[-A-Za-z0-9_.]`, alphanumeric at both ends.
 *
 * @example
 * ```ts
 * isValidLabelValue("retail eu").length; // 1
 * ```
 */
export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE_RE.test(value)) {
    errs.push(regexError(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
      LABEL_VALUE,
      "MyValue",
      "my_value",
      "12345",
    ));
  }
  return errs;
}

/** A path segment name (the name of a Role, a ClusterRole and their bindings): not `.` or `..`, no `/` or `%`. */
export function isValidPathSegmentName(value: string): string[] {
  if (value === "." || value === "..") return [`may not be '${value}'`];
  return ["/", "%"].filter((c) => value.includes(c)).map((c) => `may not contain '${c}'`);
}

/** A kind's rule for its objects' names: given the name, or the `generateName` prefix (`prefix`), what is wrong. */
export type NameRule = (name: string, prefix: boolean) => string[];

/**
 * `generateName` is checked as the name it begins: a trailing `-` is masked as Go's `maskTrailingDash` does, on bytes
 * (`name[:len(name)-2] + "a"`: a multi-byte character before the dash is cut in two, and fails every rule).
 */
function masked(name: string): string {
  const bytes = new TextEncoder().encode(name);
  if (bytes.length <= 1 || !name.endsWith("-")) return name;
  return new TextDecoder().decode(bytes.slice(0, bytes.length - 2)) + "a";
}

/** The name rules of the API server's kinds (`NameIsDNSSubdomain` and the others of `pkg/api/validation`). */
export const NAME_RULES = {
  /** Custom resources, Secrets, ConfigMaps, ResourceQuotas, LimitRanges. */
  dnsSubdomain: (name: string, prefix: boolean) => isDNS1123Subdomain(prefix ? masked(name) : name),
  /** Namespaces. */
  dnsLabel: (name: string, prefix: boolean) => isDNS1123Label(prefix ? masked(name) : name),
  /** Services. */
  dns1035Label: (name: string, prefix: boolean) => isDNS1035Label(prefix ? masked(name) : name),
  /** Roles, ClusterRoles, RoleBindings, ClusterRoleBindings (`path.ValidatePathSegmentName`). */
  pathSegment: (name: string, prefix: boolean) =>
    prefix
      ? ["/", "%"].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`)
      : isValidPathSegmentName(name),
} as const satisfies Record<string, NameRule>;
