/**
 * Admission through the API server, asked again and again during a rollout: a dry-run create of a TenantCluster,
 * which the API server sends to the TenantCluster webhook (failurePolicy Fail). An answer is the webhook's (allowed,
 * or denied in its words); a failure is the API server's when it cannot call the webhook. The gap is the longest
 * time between two answers.
 *
 * @module
 */

/** What the probe saw. */
export interface ProbeReport {
  readonly requests: number;
  readonly answered: number;
  readonly failures: { at: number; text: string }[];
  /** The longest time, in ms, from one answer to the next (or to the end). */
  readonly longestGapMs: number;
}

/** Probes every `intervalMs` until `stop()`, which resolves to the report. */
export function startAdmissionProbe(
  options: {
    server: string;
    token: string;
    caFile: string;
    namespace: string;
    object: unknown;
    intervalMs: number;
  },
): { stop(): Promise<ProbeReport> } {
  const client = Deno.createHttpClient({ caCerts: [Deno.readTextFileSync(options.caFile)] });
  const url = `${options.server}/apis/butler.butlerlabs.dev/v1alpha1/namespaces/${options.namespace}` +
    "/tenantclusters?dryRun=All&timeout=10s";
  let running = true;
  let requests = 0;
  let answered = 0;
  const failures: { at: number; text: string }[] = [];
  let lastAnswer = Date.now();
  let longestGapMs = 0;
  const loop = (async () => {
    while (running) {
      const sent = Date.now();
      requests++;
      try {
        const res = await fetch(url, {
          method: "POST",
          client,
          headers: { authorization: `Bearer ${options.token}`, "content-type": "application/json" },
          body: JSON.stringify(options.object),
          signal: AbortSignal.timeout(15_000),
        });
        const body = await res.text();
        // 201: every admission step allowed it, the webhook too; denied in the webhook's words: answered. Anything
        // else is not the webhook's answer (a webhook the API server could not call is "failed calling webhook").
        if (
          res.status === 201 ||
          /admission webhook "tenantclusters\.admission\.butler\.butlerlabs\.dev" denied/.test(body)
        ) {
          answered++;
          longestGapMs = Math.max(longestGapMs, Date.now() - lastAnswer);
          lastAnswer = Date.now();
        } else failures.push({ at: sent, text: `${res.status} ${body.slice(0, 300)}` });
      } catch (err) {
        failures.push({ at: sent, text: err instanceof Error ? err.message : String(err) });
      }
      await new Promise((r) => setTimeout(r, Math.max(0, options.intervalMs - (Date.now() - sent))));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      client.close();
      longestGapMs = Math.max(longestGapMs, Date.now() - lastAnswer);
      return { requests, answered, failures, longestGapMs };
    },
  };
}
