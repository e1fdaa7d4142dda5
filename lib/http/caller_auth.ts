/**
 * Who may call the service's routes, checked on each request: the hooks only Metacontroller's client certificate,
 * the admission webhooks only on their listener (and, configured, only the API server's certificate), `/metrics`
 * only a token the API server says may read it. The listener's TLS findings arrive as `c.env.peer`.
 *
 * @module
 */
import type { MiddlewareHandler } from "hono";
import type { ReaderVerdict } from "../kube/mod.ts";
import { capped, jsonError } from "./errors.ts";
import type { AppEnv } from "./env.ts";

type Middleware = MiddlewareHandler<AppEnv>;

/** Who may read `/metrics`: the verdict on a request's `Authorization` header. */
export interface MetricsAuth {
  check(authorization: string | undefined, path: string, source?: string): Promise<ReaderVerdict>;
}

/** `/metrics` only for a reader `auth` lets in (anyone without one). */
export function metricsReaderAuth(auth: MetricsAuth | undefined): Middleware {
  return async (c, next) => {
    const verdict = auth && await auth.check(c.req.header("authorization"), "/metrics", c.env?.source);
    if (!verdict || verdict.status === 200) return await next();
    c.set("failure", `metrics read refused: ${verdict.reason}`);
    return jsonError(
      c,
      verdict.status,
      `reading /metrics needs a token whose user may get it: ${verdict.reason}`,
    );
  };
}

/**
 * Hook calls only with a client certificate the hooks' client CA signed and, with `names`, whose common name is
 * one of them (Metacontroller's: the CA signs other clients' certificates too).
 */
export function hookClientAuth(names: readonly string[] | undefined): Middleware {
  return async (c, next) => {
    const peer = c.env?.peer;
    const cn = peer?.subject;
    if (peer?.authorized && (!names || (cn !== undefined && names.includes(cn)))) return await next();
    if (peer?.authorized) {
      const shown = JSON.stringify(capped(cn ?? ""));
      c.set("failure", `client certificate refused: ${shown} is not Metacontroller's`);
      return jsonError(
        c,
        403,
        `hook calls answer only Metacontroller's client certificate (${names!.join(", ")}), not ${shown}`,
      );
    }
    const reason = peer?.reason ?? "no client certificate";
    c.set(
      "failure",
      `client certificate refused: ${reason}${cn ? ` (CN=${JSON.stringify(capped(cn))})` : ""}`,
    );
    return jsonError(
      c,
      403,
      `hook calls need a client certificate signed by the hooks' client CA: ${reason}`,
    );
  };
}

/** Admission reviews only on the webhook listener, and (with names) only from the API server's certificate. */
export function webhookClientAuth(
  options: { readonly separateWebhookListener?: boolean; readonly webhookClientNames?: readonly string[] },
): Middleware {
  const names = options.webhookClientNames;
  return async (c, next) => {
    if (options.separateWebhookListener && c.env?.listener !== "webhooks") {
      return jsonError(c, 404, "admission webhooks are served on the webhook listener only");
    }
    if (!names) return await next();
    const peer = c.env?.peer;
    const cn = peer?.subject;
    if (peer?.authorized && cn !== undefined && names.includes(cn)) return await next();
    const reason = !peer?.authorized
      ? peer?.reason ?? "no client certificate"
      : `client certificate ${JSON.stringify(capped(cn ?? ""))} is not the API server's (${
        names.join(", ")
      })`;
    c.set("failure", `admission review refused: ${reason}`);
    return jsonError(c, 403, `admission webhooks answer only the API server's client certificate: ${reason}`);
  };
}
