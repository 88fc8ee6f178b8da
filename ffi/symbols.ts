/**
 * The symbol table of the one-step FoundationModels plugin ABI (`ffi/oamfm.h`), for `Deno.dlopen`.
 * Only `oamfm_poll` is `nonblocking`: it is the one call that waits.
 * @module
 */

/** ABI major version this client speaks; a library with another major is refused. */
export const OAMFM_ABI_MAJOR = 1;
/** ABI minor version this client was written against. */
export const OAMFM_ABI_MINOR = 1;

/** Transport status codes returned by `oamfm_submit` / `oamfm_cancel`. */
export const OAMFM_STATUS = {
  ok: 0,
  notFound: 1,
  argument: -1,
  closed: -2,
  request: -3,
  duplicate: -4,
} as const;

/** Human-readable names of the transport status codes. */
export function statusName(status: number): string {
  switch (status) {
    case OAMFM_STATUS.ok:
      return "ok";
    case OAMFM_STATUS.notFound:
      return "not found";
    case OAMFM_STATUS.argument:
      return "invalid argument";
    case OAMFM_STATUS.closed:
      return "handle closed";
    case OAMFM_STATUS.request:
      return "malformed request";
    case OAMFM_STATUS.duplicate:
      return "duplicate request id";
    default:
      return `status ${status}`;
  }
}

/** The seven functions of the plugin ABI. */
export const FM_SYMBOLS = {
  oamfm_abi_version: { parameters: [], result: "u32" },
  oamfm_open: { parameters: ["buffer"], result: "pointer" },
  oamfm_submit: { parameters: ["pointer", "buffer"], result: "i32" },
  oamfm_cancel: { parameters: ["pointer", "buffer"], result: "i32" },
  oamfm_poll: { parameters: ["pointer", "i32"], result: "pointer", nonblocking: true },
  oamfm_free: { parameters: ["pointer"], result: "void" },
  oamfm_close: { parameters: ["pointer"], result: "void" },
} as const satisfies Deno.ForeignLibraryInterface;

/** The loaded symbols. */
export type FmSymbols = Deno.DynamicLibrary<typeof FM_SYMBOLS>["symbols"];

const encoder = new TextEncoder();

/** A NUL-terminated UTF-8 copy of `text` for a `"buffer"` parameter. */
export function cString(text: string): Uint8Array<ArrayBuffer> {
  const bytes = encoder.encode(text);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}
