/**
 * `deno task ledger [file]`: prints a NetworkPool's ledger as a table. Reads a NetworkPool (or a list of them) as
 * JSON or YAML from the file, or from standard input:
 *
 * ```sh
 * kubectl get networkpool lab-pool -n butler-system -o yaml | npx -y deno@2.9.6 task ledger
 * ```
 *
 * `--output json` prints the grants as JSON; `--v1` prints the status patch that writes the ledger in the first
 * format (version 0.1) for a downgrade. Exits 1 when a ledger cannot be read.
 *
 * @module
 */
import { parseAllDocuments } from "yaml";
import { describeLedger, downgradePatch, ledgerJson, ledgerTable } from "../lib/pool_ledger/describe.ts";

const args = [...Deno.args];
const flag = (name: string) => {
  const i = args.indexOf(name);
  if (i >= 0) args.splice(i, 1);
  return i >= 0;
};
const json = flag("--output=json") ||
  (args.includes("--output") && args.splice(args.indexOf("--output"), 2)[1] === "json");
const v1 = flag("--v1");
// What is left is at most one file name: an unknown flag or a second file is a usage error, not a file to open.
const unknown = args.filter((a) => a.startsWith("--") || (a.startsWith("-") && a !== "-"));
if (unknown.length || args.length > 1) {
  console.error(
    `${unknown.length ? `unknown option ${unknown.join(", ")}` : "one file at most"}\n` +
      "usage: deno task ledger [--output json] [--v1] [file|-]",
  );
  Deno.exit(2);
}
const text = args[0] && args[0] !== "-"
  ? await Deno.readTextFile(args[0])
  : await new Response(Deno.stdin.readable).text();

type Obj = {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  status?: unknown;
  items?: Obj[];
};
const docs = parseAllDocuments(text).map((d) => d.toJS() as Obj).filter((d) => d);
const pools = docs.flatMap((d) => (Array.isArray(d.items) ? d.items : [d]));
let failed = false;
for (const pool of pools) {
  const name = `${pool.metadata?.namespace ?? ""}/${pool.metadata?.name ?? "?"}`;
  const d = describeLedger(pool.status);
  if (!d.ok) {
    console.error(`NetworkPool ${name}: ${d.message}`);
    failed = true;
    continue;
  }
  if (v1) {
    const p = downgradePatch(d.ledger);
    if (!p.ok) {
      console.error(`NetworkPool ${name}: ${p.message}`);
      failed = true;
    } else console.log(JSON.stringify(p.patch));
  } else if (json) console.log(JSON.stringify({ pool: name, grants: ledgerJson(d.ledger) }, null, 2));
  else console.log(`NetworkPool ${name}: ${d.ledger.size} grant(s)\n${ledgerTable(d.ledger)}\n`);
}
if (failed) Deno.exit(1);
