/**
 * The typed error of an API answer that is not a success.
 *
 * @module
 */

/** An API answer that is not a success: the HTTP status and the API's own `reason` and `message`. */
export class KubeApiError extends Error {
  override readonly name = "KubeApiError";
  constructor(
    readonly status: number,
    readonly reason: string,
    /** The API's own message (a Status's `message`), as a user should read it. */
    readonly detail: string,
    readonly path: string,
  ) {
    super(`${path}: ${status} ${reason}: ${detail}`);
  }
}
