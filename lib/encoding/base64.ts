/**
 * Encodes bytes as standard base64 (with padding), as Kubernetes expects for admission patches.
 *
 * @example
 * ```ts
 * encodeBase64(new TextEncoder().encode("[]")); // "W10="
 * ```
 */
export function encodeBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** Decodes standard base64 into bytes. */
export function decodeBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}
