/**
 * The corpus of what a repository holds beyond our spec fields (issue #57), judged by the real API server and by
 * `plan` alike in tests/api/meta_corpus.api.ts:
 *
 * - **Metadata** of every kind whose name rule differs (a Team: DNS-1123 subdomain; a Namespace: label; a Role: path
 *   segment): each value of apimachinery's own validation test tables (read from its Go module) as a name, a
 *   `generateName`, a label key and value, an annotation key and a finalizer; and generated cases: every metadata
 *   field of the wrong JSON type, timestamps, owner references, the annotations' total size, `generateName` edges.
 * - **Formats**: each value of kube-openapi's format test tables, and generated ones, in a field of every format
 *   (tests/api/corpus/formats-crd.yaml).
 * - **YAML forms and kinds**, read by kubectl itself: YAML 1.1 scalars, merge keys, repeated keys, anchors, document
 *   separators, JSON streams, Lists, and apiVersions and kinds served or not.
 *
 * Deterministic: the same tables give the same corpus.
 */

/** One object the corpus sends to the API server as JSON. */
export interface ApiCase {
  readonly name: string;
  readonly object: Record<string, unknown>;
}

/** One manifest file the corpus gives kubectl. */
export interface YamlCase {
  readonly name: string;
  readonly text: string;
}

/** The namespace the corpus's namespaced objects are created in. */
export const CORPUS_NAMESPACE = "corpus-57";

const TEAM_SPEC = { displayName: "Corpus", access: { users: [{ name: "ann@example.com", role: "admin" }] } };

function team(metadata: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: "butler.butlerlabs.dev/v1alpha1", kind: "Team", metadata, spec: TEAM_SPEC };
}

/** A value as a case name: short and printable. */
const label = (v: unknown) => JSON.stringify(v).slice(0, 50);

/**
 * Each value in every metadata field whose rule the API server applies to it: as a Team's name (with its label,
 * annotation and finalizer uses in the same object), as a `generateName`, as a Namespace's and as a Role's name.
 */
export function metadataValueCases(values: readonly string[]): ApiCase[] {
  return values.flatMap((v) => [
    {
      name: `team name, label key and value, annotation key, finalizer ${label(v)}`,
      object: team({ name: v, labels: { [v]: "ok", k: v }, annotations: { [v]: "x" }, finalizers: [v] }),
    },
    { name: `team generateName ${label(v)}`, object: team({ generateName: v }) },
    {
      name: `namespace name ${label(v)}`,
      object: { apiVersion: "v1", kind: "Namespace", metadata: { name: v } },
    },
    {
      name: `role name ${label(v)}`,
      object: {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "Role",
        metadata: { name: v, namespace: CORPUS_NAMESPACE },
      },
    },
  ]);
}

const WRONG_TYPES: readonly unknown[] = [true, 1, 1.5, "x", {}, [], null];
const FIELD_TYPES: Readonly<Record<string, string>> = {
  name: "string",
  generateName: "string",
  uid: "string",
  selfLink: "string",
  generation: "number",
  creationTimestamp: "string",
  deletionTimestamp: "string",
  deletionGracePeriodSeconds: "number",
  labels: "object",
  annotations: "object",
  ownerReferences: "array",
  finalizers: "array",
};
const TIMESTAMPS: readonly unknown[] = [
  "2024-01-01T00:00:00Z",
  "2024-01-01T10:00:00.123456789+02:00",
  "2024-01-01T1:0:0Z",
  "x",
  "2024-13-01T00:00:00Z",
  "2024-02-30T00:00:00Z",
  "2023-02-29T00:00:00Z",
  "2024-02-29T00:00:00Z",
  "2024-01-01",
  "2024-01-01T25:00:00Z",
  "2024-01-01T10:60:00Z",
  "2024-01-01T10:00:61Z",
  "2024-01-01T10:00:00+25:00",
  "2024-01-01T10:00:00+02:61",
  "2024-01-01t10:00:00z",
  "2024-01-01T10:00:00Zjunk",
  "2024-01-01 10:00:00Z",
  "24-01-01T10:00:00Z",
  "é",
  "",
];
const OWNER = { apiVersion: "v1", kind: "ConfigMap", name: "c", uid: "u" };

/** Generated metadata: every field of the wrong JSON type, timestamps, owner references, sizes, generateName edges. */
export function generatedMetadataCases(): ApiCase[] {
  const cases: ApiCase[] = [];
  const add = (name: string, metadata: Record<string, unknown>) =>
    cases.push({ name, object: team(metadata) });
  for (const [field, type] of Object.entries(FIELD_TYPES)) {
    for (const v of WRONG_TYPES) {
      const actual = v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
      if (actual === type && !(type === "number" && v === 1.5)) continue;
      add(`metadata.${field} = ${label(v)}`, { name: "wrong-type", [field]: v });
    }
  }
  for (const v of WRONG_TYPES) {
    add(`a label value ${label(v)}`, { name: "wrong-type", labels: { a: v } });
    add(`an annotation value ${label(v)}`, { name: "wrong-type", annotations: { a: v } });
    add(`a finalizer ${label(v)}`, { name: "wrong-type", finalizers: [v] });
    add(`an owner reference ${label(v)}`, { name: "wrong-type", ownerReferences: [v] });
    for (const f of ["apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"]) {
      add(`ownerReferences[0].${f} = ${label(v)}`, {
        name: "wrong-type",
        ownerReferences: [{ ...OWNER, [f]: v }],
      });
    }
  }
  for (const ts of TIMESTAMPS) {
    add(`creationTimestamp ${label(ts)}`, { name: "timestamps", creationTimestamp: ts });
    add(`deletionTimestamp ${label(ts)}`, { name: "timestamps", deletionTimestamp: ts });
  }
  const owners: Record<string, unknown>[][] = [
    [{ ...OWNER, kind: "Event" }],
    [{ ...OWNER, apiVersion: "events.k8s.io/v1", kind: "Event" }],
    [{ apiVersion: "", kind: "", name: "", uid: "" }],
    [{ ...OWNER, apiVersion: "apps/" }],
    [{ ...OWNER, apiVersion: "/v1" }],
    [{ ...OWNER, apiVersion: "a/b/c" }],
    [{ ...OWNER, controller: true }, { ...OWNER, name: "d", controller: true }],
    [{ ...OWNER, controller: true }, { ...OWNER, name: "d", controller: false }],
    [{ ...OWNER, blockOwnerDeletion: true }],
    [{}],
  ];
  owners.forEach((refs, i) => add(`owner references #${i}`, { name: "owners", ownerReferences: refs }));
  const limit = 256 * 1024;
  for (const size of [limit - 2, limit - 1, limit, limit + 1]) {
    add(`annotations of ${size} bytes`, { name: "big", annotations: { a: "x".repeat(size - 1) } });
  }
  add("annotations of many keys", {
    name: "big",
    annotations: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, "y".repeat(900)])),
  });
  for (
    const g of [
      "a-",
      "-",
      "a",
      "A-",
      "a.b-",
      `${"x".repeat(57)}-`,
      `${"x".repeat(62)}-`,
      "x".repeat(300),
      "é-",
    ]
  ) {
    add(`generateName ${label(g)}`, { generateName: g });
    add(`generateName ${label(g)} with a name`, { name: "named", generateName: g });
  }
  for (
    const f of [["orphan", "foregroundDeletion"], ["kubernetes"], ["a.b"], ["example.com/f"], ["a", "a"]]
  ) {
    add(`finalizers ${label(f)}`, { name: "finalizers", finalizers: f });
  }
  add("generation -1", { name: "gen", generation: -1 });
  add("no name", { labels: { a: "b" } });
  add("no metadata", {});
  return cases;
}

/** The formats the corpus's FormatProbe has a field of (its field is the name with `_` for `-`). */
export const PROBE_FORMATS: readonly string[] = [
  "bsonobjectid",
  "uri",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "cidr",
  "mac",
  "uuid",
  "uuid3",
  "uuid4",
  "uuid5",
  "isbn",
  "isbn10",
  "isbn13",
  "creditcard",
  "ssn",
  "hexcolor",
  "rgbcolor",
  "byte",
  "password",
  "date",
  "duration",
  "date-time",
  "datetime",
  "k8s-short-name",
  "k8s-long-name",
  "int32",
  "int64",
  "float",
  "unknown-format",
];

/** Values every format is tried with, besides its own table's: edges of every format at once. */
const FORMAT_EDGES: readonly string[] = [
  "",
  " ",
  "a",
  "x".repeat(64),
  "a".repeat(256),
  "é",
  "☃.example.com",
  "0",
  "-1",
  "1.5",
  "true",
  "null",
  "2026-11-23T10:00:00Z",
  "2026-11-23",
  "1h30m",
  "3 days",
  "10.0.0.1",
  "010.000.000.001",
  "10.0.0.0/8",
  "10.0.0.0/33",
  "::1",
  "fe80::1%eth0",
  "[::1]:80",
  "http://[fe80::1%25eth0]/",
  "http://example.com:80/a?b#c",
  "mailto:a@b",
  "/relative",
  "Gogh Fir <gf@example.com>",
  "=?utf-8?q?J=C3=B6rg?= <j@example.com>",
  "=?x-unknown?q?a?= <j@example.com>",
  "01:23:45:67:89:ab",
  "0123.4567.89ab",
  "0123456789ab",
  "6fa459ea-ee8a-3ca4-894e-db77e160355e",
  "123e4567-e89b-42d3-a456-426614174000",
  "978-0321751041",
  "4111 1111 1111 1111",
  "123-45-6789",
  "#fff",
  "rgb(255, 0, 0)",
  "aGVsbG8=",
  "507f1f77bcf86cd799439011",
  "my-name",
  "my.name",
  "My_Name",
  "a..b",
];

/**
 * One FormatProbe per value: every format field holds it, so the API server judges the value against every format
 * at once. `byFormat` gives each format's own table values (which are tried in every field too).
 */
export function formatCases(byFormat: ReadonlyMap<string, readonly string[]>): ApiCase[] {
  const values = [...new Set([...FORMAT_EDGES, ...[...byFormat.values()].flat()])];
  return values.map((v, i) => ({
    name: `formats ${label(v)}`,
    object: {
      apiVersion: "corpus.butler.test/v1",
      kind: "FormatProbe",
      metadata: { name: `probe-${i}` },
      spec: Object.fromEntries(PROBE_FORMATS.map((f) => [f.replaceAll("-", "_"), v])),
    },
  }));
}

const TEAM_YAML = (name: string, spec = "  displayName: Corpus\n") =>
  `apiVersion: butler.butlerlabs.dev/v1alpha1
kind: Team
metadata:
  name: ${name}
spec:
${spec}  access:
    users: [{ name: ann@example.com, role: admin }]
`;

const SCALARS: readonly string[] = [
  "yes",
  "no",
  "on",
  "off",
  "y",
  "n",
  "Y",
  "True",
  "TRUE",
  "~",
  "null",
  "''",
  "0x1F",
  "017",
  "0o17",
  "0b101",
  "1_000",
  "1e3",
  ".5",
  "1.0",
  "+1",
  "-0",
  "2001-12-14",
  "2001-12-14T21:59:43.10-05:00",
  "12:30:45",
  "'yes'",
  '"0x1F"',
  "!!str 10",
  "!!str yes",
  "'quoted'",
  "plain text",
  "|\n    block\n",
  ">\n    folded\n",
];

/** Manifest files of YAML forms and kinds, each read and sent by kubectl. */
export function yamlCases(): YamlCase[] {
  const cases: YamlCase[] = [];
  const add = (name: string, text: string) => cases.push({ name, text });
  SCALARS.forEach((s, i) => {
    add(`displayName: ${s}`, TEAM_YAML(`scalar-${i}`, `  displayName: ${s}\n`));
    add(
      `maxClusters: ${s}`,
      TEAM_YAML(`number-${i}`, `  displayName: N\n  resourceLimits:\n    maxClusters: ${s}\n`),
    );
  });
  add("label value yes", TEAM_YAML("l1").replace("  name: l1\n", "  name: l1\n  labels: { a: yes }\n"));
  add("label value '1'", TEAM_YAML("l2").replace("  name: l2\n", "  name: l2\n  labels: { a: '1' }\n"));
  add("label value 1.0", TEAM_YAML("l3").replace("  name: l3\n", "  name: l3\n  labels: { a: 1.0 }\n"));
  add(
    "annotation key yes",
    TEAM_YAML("l4").replace("  name: l4\n", "  name: l4\n  annotations: { yes: x }\n"),
  );
  add("spec key y", TEAM_YAML("k1", "  displayName: K\n  y: 1\n"));
  add("repeated key: the last wins", TEAM_YAML("d1", "  displayName: First\n  displayName: yes\n"));
  add("repeated name", TEAM_YAML("d2").replace("  name: d2\n", "  name: d2\n  name: D2\n"));
  add(
    "merge key",
    `base: &b { displayName: Merged, access: { users: [{ name: ann@example.com, role: admin }] } }\n`,
  );
  add(
    "merge into spec",
    `apiVersion: butler.butlerlabs.dev/v1alpha1\nkind: Team\nmetadata: { name: m1 }\nspec:\n  <<: { displayName: Merged, access: { users: [{ name: ann@example.com, role: admin }] } }\n`,
  );
  add(
    "merge after a key",
    `apiVersion: butler.butlerlabs.dev/v1alpha1\nkind: Team\nmetadata: { name: m2 }\nspec:\n  displayName: 5\n  <<: { displayName: Merged, access: { users: [{ name: ann@example.com, role: admin }] } }\n`,
  );
  add(
    "merge before a key",
    `apiVersion: butler.butlerlabs.dev/v1alpha1\nkind: Team\nmetadata: { name: m3 }\nspec:\n  <<: { displayName: 5, access: { users: [{ name: ann@example.com, role: admin }] } }\n  displayName: Merged\n`,
  );
  add(
    "merge of a list, the first wins",
    `apiVersion: butler.butlerlabs.dev/v1alpha1\nkind: Team\nmetadata: { name: m4 }\nspec:\n  <<: [{ displayName: One }, { displayName: 2, access: { users: [{ name: ann@example.com, role: admin }] } }]\n`,
  );
  add("merge of a scalar", `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: m5\n  <<: 5\n`);
  add(
    "anchors and aliases",
    `apiVersion: butler.butlerlabs.dev/v1alpha1\nkind: Team\nmetadata: { name: &n a1 }\nspec:\n  displayName: *n\n  access: &acc { users: [{ name: ann@example.com, role: admin }] }\n`,
  );
  add("an alias of nothing", `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: *nowhere\n`);
  add("a null key", `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: nk\n  labels: { ~: x }\n`);
  add("a NaN", TEAM_YAML("nan", "  displayName: .nan\n"));
  add("an infinity", TEAM_YAML("inf", "  displayName: -.inf\n"));
  add(
    "a float key",
    `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fk\n  labels: { 1.5: x, 0x10: y }\n`,
  );
  add("two documents", `${TEAM_YAML("two-a")}---\n${TEAM_YAML("two-b")}`);
  add("a separator with a comment", `--- # first\n${TEAM_YAML("sc")}`);
  add("a separator with text", `${TEAM_YAML("st-a")}--- x\n${TEAM_YAML("st-b")}`);
  add("an end marker", `${TEAM_YAML("em")}...\n`);
  add("only comments", `# nothing here\n`);
  add(
    "a JSON stream",
    `${JSON.stringify(JSON.parse(yamlJSON("js-a")))}\n${JSON.stringify(JSON.parse(yamlJSON("js-b")))}\n`,
  );
  add(
    "JSON with a repeated key",
    `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"jr1","name":"jr2"}}`,
  );
  add("JSON that is not", `{"apiVersion":"v1","kind":"Namespace",metadata: {name: jy}}`);
  add(
    "a List",
    `apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Namespace\n    metadata: { name: li-a }\n`,
  );
  add(
    "a TeamList of items without kind",
    `apiVersion: butler.butlerlabs.dev/v1alpha1\nkind: TeamList\nitems:\n  - metadata: { name: tl }\n    spec: { displayName: L, access: { users: [{ name: ann@example.com, role: admin }] } }\n`,
  );
  add("a List whose items is a map", `apiVersion: v1\nkind: List\nitems: { a: 1 }\n`);
  add("an object with items", `apiVersion: v1\nkind: Namespace\nmetadata: { name: oi }\nitems: []\n`);
  add("generateName", TEAM_YAML("x").replace("  name: x\n", "  generateName: gen-\n"));
  add(
    "a cluster-scoped object with a namespace",
    TEAM_YAML("cn").replace("  name: cn\n", "  name: cn\n  namespace: somewhere\n"),
  );
  const kinds: [string, string][] = [
    ["butler.butlerlabs.io/v1alpha1", "Team"],
    ["butler.butlerlabs.dev/v1alpha2", "Team"],
    ["butler.butlerlabs.dev/v1alpha1", "Teams"],
    ["butler.butlerlabs.dev/v1alpha1", "team"],
    ["butler.butlerlabs.dev", "Team"],
    ["v1", "Namspace"],
    ["v1", "namespace"],
    ["v2", "Namespace"],
    ["apps/v1beta1", "Deployment"],
    ["extensions/v1beta1", "Ingress"],
    ["policy/v1beta1", "PodSecurityPolicy"],
    ["cert-manager.example/v1", "Certificate"],
    ["a/b/c", "Namespace"],
    ["", "Namespace"],
    ["v1", ""],
  ];
  kinds.forEach(([apiVersion, kind], i) =>
    add(
      `apiVersion ${label(apiVersion)} kind ${label(kind)}`,
      TEAM_YAML(`kind-${i}`).replace(
        "apiVersion: butler.butlerlabs.dev/v1alpha1\nkind: Team\n",
        `${apiVersion ? `apiVersion: ${apiVersion}\n` : ""}${kind ? `kind: ${kind}\n` : ""}`,
      ),
    )
  );
  add(
    "a served built-in kind plan does not judge",
    `apiVersion: v1\nkind: ServiceAccount\nmetadata: { name: sa, namespace: ${CORPUS_NAMESPACE} }\n`,
  );
  add("a Namespace", `apiVersion: v1\nkind: Namespace\nmetadata: { name: ns-ok }\n`);
  add("a Namespace with dots", `apiVersion: v1\nkind: Namespace\nmetadata: { name: ns.dots }\n`);
  return cases;
}

/** A Namespace as JSON text. */
function yamlJSON(name: string): string {
  return JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
}
