/**
 * The shared wire cases (wire_cases.ts) over the stdio transport: `createStdioServer` with the bridge's line
 * framing on byte streams, as `oam stdio` runs it (in-process, so the cases need no child process).
 */
import { runWireCases } from "./wire_cases.ts";
import { stdioConnection } from "../helpers/stdio_connection.ts";

runWireCases({
  name: "stdio",
  open() {
    return Promise.resolve(stdioConnection());
  },
});
