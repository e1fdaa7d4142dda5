# The hook service and the reporter (`main.ts reporter`) run under `deno` itself (no `deno compile`).
FROM denoland/deno:2.9.6

WORKDIR /app
ENV DENO_DIR=/deno-dir \
    DENO_NO_UPDATE_CHECK=1 \
    DENO_NO_PROMPT=1

COPY deno.json deno.lock ./
COPY main.ts server.ts reporter.ts worker.ts ./
COPY lib ./lib
COPY hooks ./hooks

# Resolve every npm dependency at build time from the frozen lockfile; the container never downloads.
RUN deno cache --frozen main.ts worker.ts && chown -R deno:deno /deno-dir

USER deno
EXPOSE 8080
# --cached-only: fail fast instead of reaching the network; --no-code-cache: the root filesystem is read-only.
CMD ["run", "--cached-only", "--frozen", "--no-code-cache", "--unstable-no-legacy-abort", "--allow-net", "--allow-env", "--allow-read", "main.ts"]
