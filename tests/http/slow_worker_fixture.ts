/**
 * A hook worker for the deadline test: it speaks the pool's protocol and, asked to `spin`, keeps its thread busy
 * for a second (as a pathological hook input would) before answering; anything else is answered at once.
 */
import type { FromWorker, ToWorker } from "../../lib/isolation/mod.ts";

const scope = self as unknown as {
  postMessage(m: FromWorker): void;
  onmessage: (event: MessageEvent<ToWorker>) => void;
};
scope.onmessage = (event) => {
  const msg = event.data;
  if (msg.type === "init") return scope.postMessage({ type: "ready" });
  if (msg.type !== "run") return;
  const text = new TextDecoder().decode(msg.request.body);
  if (text === "spin") {
    const until = performance.now() + 1000;
    while (performance.now() < until) { /* busy, as a slow hook */ }
  }
  scope.postMessage({
    type: "reply",
    id: msg.id,
    reply: { status: 200, body: JSON.stringify({ echo: text }) },
  });
};
