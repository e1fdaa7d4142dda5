/**
 * The OpenAPI `format`s the API server checks in a custom resource (`apiextensions-apiserver`'s supported formats,
 * validated by `kube-openapi`'s `strfmt` registry), each by the same test, in its words:
 * `spec.observedAt: Invalid value: "yesterday": spec.observedAt in body must be of type date-time: "yesterday"`.
 * Format names are compared without dashes (`date-time` is `datetime`); a format the API server does not support
 * (`int32`, `int64`, or `k8s-short-name` before 1.34) is not checked, as the API server strips it.
 *
 * @module
 */
import {
  isDate,
  isDateTime,
  isDuration,
  parseAddress,
  parseCIDRSloppy,
  parseIP,
  parseIPSloppy,
  parseMAC,
  parseRequestURI,
  quote,
} from "../gostd/mod.ts";
import type { FieldError } from "./field_error.ts";
import { byteLength } from "./names.ts";

const HOSTNAME =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const CREDIT_CARD =
  /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const SHORT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LONG_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `strfmt.IsHostname`: the pattern, at most 255 bytes, no label over 63 bytes. */
function isHostname(s: string): boolean {
  return HOSTNAME.test(s) && byteLength(s) <= 255 && s.split(".").every((p) => byteLength(p) <= 63);
}

/** govalidator's `IsCreditCard`: the digits (everything else dropped) of a known pattern, Luhn's checksum. */
function isCreditCard(s: string): boolean {
  const digits = s.replace(/[^0-9]+/g, "");
  if (!CREDIT_CARD.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let n = digits.charCodeAt(i) - 48;
    if (double) n = n * 2 >= 10 ? (n * 2) % 10 + 1 : n * 2;
    sum += n;
    double = !double;
  }
  return sum % 10 === 0;
}

/** govalidator's `IsISBN`: spaces and dashes dropped, ten digits (or nine and X) or thirteen, the checksum right. */
function isISBN(s: string, version: 10 | 13): boolean {
  const d = s.replace(/[\t\n\f\r -]+/g, "");
  if (version === 10) {
    if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(d)) return false;
    let sum = 0;
    for (let i = 0; i < 9; i++) sum += (i + 1) * (d.charCodeAt(i) - 48);
    sum += d[9] === "X" ? 100 : 10 * (d.charCodeAt(9) - 48);
    return sum % 11 === 0;
  }
  if (!/^[0-9]{13}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += (i % 2 ? 3 : 1) * (d.charCodeAt(i) - 48);
  return (d.charCodeAt(12) - 48) - ((10 - (sum % 10)) % 10) === 0;
}

/** Each format's test, by its name without dashes. */
const VALIDATORS: Readonly<Record<string, (s: string) => boolean>> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: parseRequestURI,
  email: parseAddress,
  hostname: isHostname,
  ipv4: (s) => parseIPSloppy(s) && s.includes("."),
  ipv6: (s) => parseIP(s) && s.includes(":"),
  cidr: parseCIDRSloppy,
  mac: parseMAC,
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  isbn: (s) => isISBN(s, 10) || isISBN(s, 13),
  isbn10: (s) => isISBN(s, 10),
  isbn13: (s) => isISBN(s, 13),
  creditcard: isCreditCard,
  ssn: (s) => byteLength(s) === 11 && /^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: (s) =>
    /^rgb\([\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*,[\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*,[\t\n\f\r ]*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])[\t\n\f\r ]*\)$/
      .test(s),
  byte: (s) => BASE64.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
  k8sshortname: (s) => byteLength(s) <= 63 && SHORT_NAME.test(s),
  k8slongname: (s) => byteLength(s) <= 253 && LONG_NAME.test(s),
};

/** The Kubernetes minor version from which each format is checked (the rest: since 1.0). */
const INTRODUCED: Readonly<Record<string, number>> = { k8sshortname: 34, k8slongname: 34 };

/** The newest Kubernetes minor version `plan` judges as. */
export const NEWEST_MINOR = 35;

/**
 * The formats the API server of Kubernetes `1.<minor>` checks, by their names without dashes.
 *
 * @example
 * ```ts
 * supportedFormats(30).has("k8sshortname"); // false
 * ```
 */
export function supportedFormats(minor: number = NEWEST_MINOR): Set<string> {
  return new Set(Object.keys(VALIDATORS).filter((f) => (INTRODUCED[f] ?? 0) <= minor));
}

/**
 * The error of a string `value` at `path` whose schema has `format` (as written: `date-time`), when the API server
 * of `1.<minor>` checks that format and the value fails it; `undefined` otherwise.
 *
 * @example
 * ```ts
 * formatError("date-time", "spec.observedAt", "yesterday");
 * // { field: "spec.observedAt", type: "Invalid value", value: "yesterday",
 * //   detail: 'spec.observedAt in body must be of type date-time: "yesterday"' }
 * ```
 */
export function formatError(
  format: string,
  path: string,
  value: string,
  minor: number = NEWEST_MINOR,
): FieldError | undefined {
  const name = format.replaceAll("-", "");
  const test = VALIDATORS[name];
  if (!test || (INTRODUCED[name] ?? 0) > minor || test(value)) return undefined;
  return {
    field: path === "" ? "<nil>" : path,
    type: "Invalid value",
    value,
    detail: `${path} in body must be of type ${format}: ${quote(value)}`,
  };
}
