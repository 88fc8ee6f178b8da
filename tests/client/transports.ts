/**
 * The two transports the typed client's suite runs over: the in-process engine and the real `cli.ts stdio`
 * process. Each case opens its own bridge.
 */
import { Bridge, type BridgeOptions, StdioTransport } from "../../mod.ts";

/** Path of cli.ts. */
export const CLI = new URL("../../cli.ts", import.meta.url).pathname;

/** The argv of a real bridge process (the stdio task's permissions). */
export function stdioCommand(args: string[] = []): string[] {
  return [
    Deno.execPath(),
    "run",
    "--quiet",
    "--no-prompt",
    "--allow-read",
    "--allow-env",
    "--allow-ffi",
    CLI,
    "stdio",
    ...args,
  ];
}

/** A way to open a bridge. */
export interface TransportKind {
  /** "in-process" or "stdio". */
  name: string;
  /** Opens a bridge with `options`. */
  open(options?: BridgeOptions): Promise<Bridge>;
}

/** Both transports. */
export const TRANSPORTS: TransportKind[] = [
  { name: "in-process", open: (options = {}) => Bridge.open(options) },
  {
    name: "stdio",
    open: (options = {}) =>
      Bridge.connect(new StdioTransport({ command: stdioCommand(), stderr: "piped" }), options),
  },
];

/** Options that collect warnings instead of printing them. */
export function collecting(): { warnings: string[]; options: BridgeOptions } {
  const warnings: string[] = [];
  return { warnings, options: { onWarning: (w) => warnings.push(w) } };
}
