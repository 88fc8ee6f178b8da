/**
 * A game that pipes the bridge's stderr and never reads it: once the pipe is full, log lines must not stop
 * the bridge. It keeps answering, SIGTERM still stops it, lines past the bridge's own buffer are dropped
 * (and counted once stderr drains), and nothing is lost on stdout.
 */
import assert from "node:assert/strict";
import { withDeadline } from "../helpers/deadline.ts";
import { BridgeProcess } from "../helpers/process.ts";

/** `n` responses to ids the bridge never sent: each is ignored with a warning on stderr (about 80 bytes). */
function strayReplies(n: number, from = 0): string {
  let text = "";
  for (let i = from; i < from + n; i++) text += `{"jsonrpc":"2.0","id":"stray-${i}","result":{}}\n`;
  return text;
}

Deno.test({
  name: "unread stderr: a full stderr pipe does not stop the bridge answering, nor SIGTERM stopping it",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const p = new BridgeProcess([], { stderrPaused: true });
    try {
      // About 400 KB of warnings: several times a pipe's 64 KB.
      await withDeadline(p.write(strayReplies(5_000)), "the bridge to read 5,000 lines");
      await p.request(1, "ping");
      assert.deepEqual(await p.response(1), { jsonrpc: "2.0", id: 1, result: {} });
      await p.request(2, "session/create", {
        session: "s",
        model: { type: "scripted", steps: [{ text: "Still here." }] },
      });
      await p.request(3, "session/respond", { session: "s", prompt: "Hello?" });
      assert.equal(((await p.response(3)).result as { text: string }).text, "Still here.");
      p.child.kill("SIGTERM");
      // exit() reads stderr too: a bridge that waits for its logs to drain must not stop the exit.
      assert.equal(await p.exit(), 0);
      assert.match(p.stderr, /Ignoring a response to unknown or finished request 'stray-0'/);
    } finally {
      await p.kill();
    }
  },
});

Deno.test({
  name: "unread stderr: log lines past the bridge's buffer are dropped and counted when stderr drains",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const p = new BridgeProcess([], { stderrPaused: true });
    try {
      // About 2.4 MB of warnings, more than the pipe and the bridge's 1 MiB buffer together.
      for (let i = 0; i < 30_000; i += 5_000) {
        await withDeadline(p.write(strayReplies(5_000, i)), "the bridge to read 5,000 lines");
      }
      await p.request(1, "ping");
      assert.deepEqual(await p.response(1), { jsonrpc: "2.0", id: 1, result: {} });
      p.startReadingStderr();
      await p.until(
        () => /log lines? (was|were) dropped/.test(p.stderr),
        undefined,
        "the dropped-lines notice",
      );
      const notice = /\] warning: (\d+) log lines? (?:was|were) dropped/.exec(p.stderr);
      assert.ok(notice, p.stderr.slice(-500));
      const kept = p.stderr.match(/Ignoring a response to unknown or finished request/g)?.length ?? 0;
      assert.equal(kept + Number(notice[1]), 30_000, "every warning is either written or counted");
      // The bridge still logs after the drop.
      await p.send({ jsonrpc: "2.0", id: "after", result: {} });
      await p.until(() => p.stderr.includes("request 'after'"), undefined, "a warning after the notice");
      await p.closeInput();
      assert.equal(await p.exit(), 0);
    } finally {
      await p.kill();
    }
  },
});
