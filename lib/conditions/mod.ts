/**
 * `metav1.Condition` handling with stable timestamps: `lastTransitionTime` changes only when a condition's
 * status flips, so a hook's output is a fixed point and Metacontroller never hot-loops on status.
 *
 * @module
 */
import { z } from "zod";
import { formatTime } from "../time/mod.ts";

/** A condition status. */
export type ConditionStatus = "True" | "False" | "Unknown";

/** A standard Kubernetes condition. */
export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** What a hook decides about a condition; the time and generation are filled in by {@linkcode conditions}. */
export interface ConditionInput {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
}

/** Reads previous conditions leniently: entries that are not conditions are ignored. */
export const PreviousConditions = z.array(z.unknown()).catch([]).transform((items) =>
  items.flatMap((c) => {
    const parsed = z.object({
      type: z.string(),
      status: z.enum(["True", "False", "Unknown"]),
      lastTransitionTime: z.string().optional(),
    }).safeParse(c);
    return parsed.success ? [parsed.data] : [];
  })
);

/** Previous conditions as read by {@linkcode PreviousConditions}. */
export type PreviousConditions = z.infer<typeof PreviousConditions>;

/**
 * The longest condition message written (characters). Messages name what a team wrote (clusters, environments,
 * members, fields that do not parse); past this they are cut, so no spec can make a status grow without bound.
 */
export const MESSAGE_MAX = 4096;

/**
 * Builds the conditions to write, in the order given: each keeps its previous `lastTransitionTime` when its
 * status is unchanged, and takes `now` when it flips or is new. Messages are cut at {@linkcode MESSAGE_MAX}.
 *
 * @example
 * ```ts
 * conditions([{ type: "Ready", status: "True", reason: "Ready", message: "ok" }], previous, now, 3);
 * ```
 */
export function conditions(
  inputs: readonly ConditionInput[],
  previous: PreviousConditions,
  now: Date,
  observedGeneration?: number,
): Condition[] {
  return inputs.map((c) => {
    const prev = previous.find((p) => p.type === c.type);
    const lastTransitionTime = prev && prev.status === c.status && prev.lastTransitionTime
      ? prev.lastTransitionTime
      : formatTime(now);
    return {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: truncate(c.message, MESSAGE_MAX),
      lastTransitionTime,
      ...(observedGeneration === undefined ? {} : { observedGeneration }),
    };
  });
}

/** Shortens a message to `max` characters, marking the cut. */
export function truncate(message: string, max: number): string {
  return message.length <= max ? message : `${message.slice(0, max - 3)}...`;
}

/** Lists names for a message: at most `max`, then "and N more". */
export function listNames(names: readonly string[], max = 10): string {
  const shown = names.slice(0, max).join(", ");
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

/**
 * Lists problems for a message, `; `-separated: at most `max`, then "and N more".
 *
 * @example
 * ```ts
 * listProblems(["a: bad", "b: bad", "c: bad"], 2); // "a: bad; b: bad; and 1 more"
 * ```
 */
export function listProblems(problems: readonly string[], max = 10): string {
  const shown = problems.slice(0, max).join("; ");
  return problems.length > max ? `${shown}; and ${problems.length - max} more` : shown;
}
