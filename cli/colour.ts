/**
 * Colour for people, never for pipes: ANSI colours only when standard output is a terminal and `NO_COLOR` is not
 * set (no-color.org), so scripts, goldens and logs get plain text.
 *
 * @module
 */

/** The colours the CLI uses: green for done, yellow for near a limit, red for refused or over. */
export type Colour = "green" | "yellow" | "red";

/** Paints text in a colour, or returns it as it is. */
export type Paint = (text: string, colour: Colour) => string;

const CODES: Record<Colour, number> = { green: 32, yellow: 33, red: 31 };

/** No colour. */
export function plain(text: string): string {
  return text;
}

/** ANSI colour. */
export function ansi(text: string, colour: Colour): string {
  return `\x1b[${CODES[colour]}m${text}\x1b[0m`;
}

/**
 * The paint for an output: colour only on a terminal and without `NO_COLOR` (any non-empty value).
 *
 * @example
 * ```ts
 * paintFor(Deno.stdout.isTerminal(), Deno.env.get("NO_COLOR"));
 * ```
 */
export function paintFor(isTerminal: boolean, noColor: string | undefined): Paint {
  return isTerminal && !noColor ? ansi : plain;
}
