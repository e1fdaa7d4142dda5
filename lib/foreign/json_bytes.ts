/**
 * The bytes of JSON's structure, as the scans of `lib/foreign` (the parse charge, the projections, the door) read
 * them: UTF-8 never uses these values inside a multi-byte character, so a byte scan meets them only as themselves.
 *
 * @module
 */

/** `"` */
export const QUOTE = 0x22;
/** `\` */
export const BACKSLASH = 0x5c;
/** `{` */
export const OPEN_OBJECT = 0x7b;
/** `}` */
export const CLOSE_OBJECT = 0x7d;
/** `[` */
export const OPEN_ARRAY = 0x5b;
/** `]` */
export const CLOSE_ARRAY = 0x5d;
/** `,` */
export const COMMA = 0x2c;
/** `:` */
export const COLON = 0x3a;
