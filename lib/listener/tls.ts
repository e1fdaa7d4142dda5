/**
 * The TLS side of a listener: its key pair (and the CA of accepted client certificates) read from files, and what a
 * client presented, as the app sees it.
 *
 * @module
 */
import type { TLSSocket } from "node:tls";
import type { Peer } from "../http/env.ts";

/** Where the key pair (and the CA that signs accepted client certificates) are read from. */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** PEM CA bundle; when set, clients are asked for a certificate and `peer` says whether it verified. */
  readonly clientCaFile?: string | undefined;
}

/** The PEM texts of {@linkcode TlsFiles}. */
export type TlsMaterial = { cert: string; key: string; ca?: string };

/** Reads the files of `files`. */
export function readTls(files: TlsFiles, readFile: (path: string) => string): TlsMaterial {
  return {
    cert: readFile(files.certFile),
    key: readFile(files.keyFile),
    ...(files.clientCaFile ? { ca: readFile(files.clientCaFile) } : {}),
  };
}

/** Whether two readings of the files are the same. */
export function sameTls(a: TlsMaterial, b: TlsMaterial): boolean {
  return a.cert === b.cert && a.key === b.key && a.ca === b.ca;
}

/** What the client presented, as the app sees it. */
export function peerOf(socket: TLSSocket): Peer {
  const cert = socket.getPeerCertificate?.();
  const presented = !!cert && Object.keys(cert).length > 0;
  if (!presented) return { authorized: false, reason: "no client certificate" };
  const subject = typeof cert.subject?.CN === "string" ? cert.subject.CN : undefined;
  return socket.authorized
    ? {
      authorized: true,
      ...(subject ? { subject } : {}),
      ...(cert.valid_to ? { validTo: cert.valid_to } : {}),
    }
    : {
      authorized: false,
      reason: `client certificate not trusted (${String(socket.authorizationError ?? "unverified")})`,
      ...(subject ? { subject } : {}),
    };
}
