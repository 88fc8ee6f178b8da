/**
 * A stand-in for a game that starts the bridge (the `launcher` of tests/helpers/process.ts): runs `deno run
 * <its arguments>` with this process's stdin, stdout and stderr (so they stay open when this process is
 * killed), writes the bridge's pid on stderr, then waits until it is killed.
 *
 * Usage: deno run --allow-run --allow-read --allow-env bridge_parent.ts <deno run arguments…>
 */
const child = new Deno.Command(Deno.execPath(), {
  args: ["run", ...Deno.args],
  stdin: "inherit",
  stdout: "inherit",
  stderr: "inherit",
}).spawn();
await Deno.stderr.write(new TextEncoder().encode(`bridge pid ${child.pid}\n`));
await child.status;
// The bridge ended first (it should not): wait to be killed all the same.
setInterval(() => {}, 60_000);
