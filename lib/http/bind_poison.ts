/**
 * A hook call's parent, known before its body is parsed (issue #55): read from the body's first bytes by a
 * projection, told to the worker pool so that a parse that ends its worker or outlives its deadline is charged to
 * that parent, and answered from a projection when it is poisoned, its hook not run and its body never parsed whole.
 *
 * @module
 */
import type { Context } from "hono";
import type { z } from "zod";
import type { AppEnv } from "./env.ts";
import { readBodyWithin } from "./doors.ts";
import { bounded, members, merge, projectForeign, projectForeignUntil, WHOLE } from "../foreign/mod.ts";
import { poisonKey } from "../isolation/mod.ts";
import type { Binding } from "./binding.ts";
import type { HookContext } from "../hook_context/mod.ts";

/** How the binder answers: the clock it reads, and the checked answer it gives. */
export interface Answering<Req extends z.ZodType, Res extends z.ZodType> {
  readonly clockOf: (c: Context<AppEnv>) => Date | Response;
  readonly answer: (
    binding: Binding<Req, Res>,
    c: Context<AppEnv>,
    request: z.output<Req>,
    result: z.input<Res>,
    context: HookContext,
  ) => Response;
  readonly hookName: (path: string) => string;
}

/**
 * What a hook call's body is read for before it is parsed: whom it is about, and what a poisoned answer keeps. The
 * parent's spec (what a team wrote) and the related objects are skipped in the bytes; children, attachments and
 * the parent's status are Metacontroller's copies of what the hooks made.
 */
const IDENTITY = members({
  apiVersion: bounded(256),
  kind: bounded(256),
  metadata: members({
    uid: bounded(64),
    name: bounded(256),
    namespace: bounded(256),
    generation: bounded(32),
  }),
});
const WHOM = members({ parent: IDENTITY, object: IDENTITY });
const POISON_VIEW = (() => {
  const parent = merge(IDENTITY, members({ status: WHOLE }));
  return members({ parent, object: parent, children: WHOLE, attachments: WHOLE, finalizing: bounded(8) });
})();

/**
 * Before a hook call's body is parsed: the parent it is about, read from its bytes (a projection, which parses
 * nothing of its spec), is told to the pool, so that a call that ends its worker or runs past its deadline while
 * parsing is charged to that parent like any other failure; and a poisoned parent is answered from the same
 * projection, its hook not run and its body never parsed whole. Undefined when the call goes on to its hook.
 */
export async function answerPoisoned<Req extends z.ZodType, Res extends z.ZodType>(
  binding: Binding<Req, Res>,
  c: Context<AppEnv>,
  how: Answering<Req, Res>,
): Promise<Response | undefined> {
  const runtime = c.get("runtime");
  if (!binding.poisoning || !runtime.poison) return undefined;
  const body = await readBodyWithin(c);
  if (body === undefined) return undefined; // the read below answers 408
  const bytes = new Uint8Array(body);
  let whom: Record<string, unknown> | undefined;
  try {
    whom = projectForeignUntil(bytes, WHOM, ["parent", "object"], runtime.heapBudget);
  } catch {
    return undefined; // not JSON, or not now: the read below answers
  }
  const parent = (whom?.parent ?? whom?.object) as { metadata?: Record<string, unknown> } | undefined;
  const m = parent?.metadata;
  if (typeof m?.name !== "string") return undefined; // not a hook call: the schema below says so
  const key = poisonKey(c.req.path, {
    name: m.name,
    ...(typeof m.uid === "string" ? { uid: m.uid } : {}),
    ...(typeof m.namespace === "string" ? { namespace: m.namespace } : {}),
    ...(typeof m.generation === "number" ? { generation: m.generation } : {}),
  });
  runtime.poison.started(key);
  const now = how.clockOf(c);
  if (now instanceof Response) return now;
  const note = runtime.poison.note(key, now);
  if (!note) return undefined;
  c.set("failure", `hook not run: its parent is poisoned (${note.failure}, ${note.count} times)`);
  let view: Record<string, unknown>;
  try {
    view = projectForeign(bytes, POISON_VIEW, runtime.heapBudget) as Record<string, unknown>;
  } catch {
    return undefined; // the read below answers
  }
  const request = { ...view, children: view.children ?? {}, attachments: view.attachments ?? {} } as z.output<
    Req
  >;
  const subject = binding.subject(request);
  if (subject) c.set("subject", subject);
  const context = { now, config: runtime.hookConfig };
  return how.answer(
    binding,
    c,
    request,
    binding.poisoning.answer(request, how.hookName(c.req.path), note, now),
    context,
  );
}
