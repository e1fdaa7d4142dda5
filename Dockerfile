# The hook service and the reporter (`main.ts reporter`) run under `deno` itself (no `deno compile`).
# The base image by digest: the multi-arch index of denoland/deno:2.9.6, so a re-pushed tag changes nothing here.
# Check it against the registry before a release: docker buildx imagetools inspect denoland/deno:2.9.6
FROM denoland/deno:2.9.6@sha256:2014dc167ece617ef7e7ba40631ac2234c59e75ce693e7cc2dc2602b3c87859d

WORKDIR /app
# PORT: the port CMD's --allow-net lets the service listen on.
ENV DENO_DIR=/deno-dir \
    DENO_NO_UPDATE_CHECK=1 \
    DENO_NO_PROMPT=1 \
    PORT=8443

# The product only: tests, benchmarks and their data are left out by .dockerignore. Every command main.ts
# dispatches is here (serve, reporter, plan), and the manifests plan judges against (its CRDs, policies, webhooks
# and controllers).
COPY deno.json deno.lock ./
COPY main.ts server.ts reporter.ts worker.ts plan.ts ./
COPY lib ./lib
COPY hooks ./hooks
COPY manifests ./manifests

# Resolve every npm dependency at build time from the frozen lockfile; the container never downloads.
RUN deno cache --frozen main.ts worker.ts plan.ts && chown -R deno:deno /deno-dir

USER deno
EXPOSE 8443 9443
# The hook service with Deno's permissions narrowed (docs/security.md#the-permissions-each-process-runs-with):
# --cached-only fails fast instead of reaching the network; --no-code-cache because the root filesystem is read-only.
# manifests/hooks/deployment.yaml passes the same arguments and adds the API server to --allow-net, which only
# Kubernetes can name ($(KUBERNETES_SERVICE_HOST)); tests/manifests_test.ts holds the two together.
# `main.ts plan` runs with permissions of its own, on a folder mounted read-only (tests/api/image_plan.api.ts runs it):
# plan: docker run --rm -v "$PWD/clusters:/clusters:ro" IMAGE run --cached-only --frozen --allow-read=/app,/deno-dir,/clusters --allow-write=/tmp --allow-env=KUBECTL_VALIDATE,LOG_TOKENS,LOG_STREAM --allow-run=/usr/local/bin/kubectl-validate main.ts plan /clusters
CMD ["run", "--cached-only", "--frozen", "--no-code-cache", "--unstable-no-legacy-abort", "--allow-read=/app,/deno-dir,/etc/butler,/var/run/secrets/kubernetes.io/serviceaccount", "--allow-env=PORT,HOST,BODY_LIMIT_BYTES,SHUTDOWN_DRAIN_SECONDS,SHUTDOWN_TIMEOUT_SECONDS,OIDC_GROUPS_PREFIX,IDP_GROUP_PREFIXES,HOOK_WORKERS,HOOK_QUEUE_LIMIT,HOOK_QUEUE_BYTES,HOOK_DEADLINE_SECONDS,TLS_CERT_FILE,TLS_KEY_FILE,TLS_CLIENT_CA_FILE,TLS_RELOAD_SECONDS,HOOK_CLIENT_NAMES,WEBHOOK_PORT,WEBHOOK_TLS_CERT_FILE,WEBHOOK_TLS_KEY_FILE,WEBHOOK_CLIENT_CA_FILE,WEBHOOK_BODY_LIMIT_BYTES,WEBHOOK_CONCURRENCY,WEBHOOK_QUEUE_BYTES,WEBHOOK_CLIENT_NAMES,METRICS_AUTH,KUBERNETES_SERVICE_HOST,KUBERNETES_SERVICE_PORT,KUBECONFIG,HOSTNAME,LOG_TOKENS,LOG_STREAM", "--allow-net=0.0.0.0:8443,0.0.0.0:9443", "main.ts"]
