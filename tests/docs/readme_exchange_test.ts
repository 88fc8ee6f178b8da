/**
 * The README's "A complete exchange" is what `oam stdio` writes: its `→` lines are sent to the real process as
 * they stand (the answer to the `tool/call` once that call has come), and each `←` line must match the line the
 * bridge wrote at that place, with `…` standing for any text (`← …` for any number of lines). Before, its first
 * text event showed a chunk the scripted model had not streamed for a long time.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);
const README = await Deno.readTextFile(new URL("README.md", ROOT));

/** The `→` and `←` lines of the README's exchange, in order. */
function exchange(): { sent: boolean; text: string }[] {
  const section = README.slice(README.indexOf("## A complete exchange"));
  const block = /```text\n([\s\S]*?)\n```/.exec(section)?.[1];
  assert.ok(block, "the section has a text block");
  return block.split("\n").filter((line) => /^[→←] /.test(line))
    .map((line) => ({ sent: line.startsWith("→"), text: line.slice(2) }));
}

/** A pattern for a documented line: the text as written, `…` for any text. */
function pattern(documented: string): RegExp {
  const parts = documented.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*?")}$`);
}

Deno.test("README: the complete exchange is what oam stdio writes, line by line", async () => {
  const lines = exchange();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", "--no-prompt", "--allow-read", "--allow-env", "cli.ts", "stdio"],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const send = (line: string) => writer.write(new TextEncoder().encode(`${line}\n`));
  // Requests go at once; an answer to a tool/call waits for that call.
  const answers = new Map<unknown, string>();
  let lastId: unknown;
  for (const { sent, text } of lines.filter((line) => line.sent)) {
    const message = JSON.parse(text);
    if (sent && "method" in message) {
      await send(text);
      lastId = message.id;
    } else answers.set(message.id, text);
  }
  const written: string[] = [];
  let buffer = "";
  const decoder = new TextDecoder();
  read: for await (const chunk of child.stdout) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      written.push(line);
      const message = JSON.parse(line);
      if (message.method === "tool/call" && answers.has(message.id)) await send(answers.get(message.id)!);
      if (message.id === lastId && !("method" in message)) break read;
    }
  }
  await writer.close();
  assert.equal((await child.status).code, 0);

  const documented = lines.filter((line) => !line.sent).map((line) => line.text);
  if (Deno.build.os === "darwin") { // the on-device model may be available there
    documented[0] = documented[0].replace(/"model":\{.*$/, '"model":{…}}}');
  }
  let at = 0;
  for (let i = 0; i < documented.length; i++) {
    if (documented[i].startsWith("…")) { // any number of lines, up to the one the next documented line matches
      while (at < written.length && !pattern(documented[i + 1]).test(written[at])) at++;
      continue;
    }
    assert.ok(at < written.length, `nothing was written where the README shows ${documented[i]}`);
    assert.match(
      written[at],
      pattern(documented[i]),
      `line ${at + 1} the bridge wrote:\n  ${written[at]}\nwhere the README shows:\n  ${documented[i]}`,
    );
    at++;
  }
  assert.equal(at, written.length, `written after the README's last line: ${written.slice(at).join("\n")}`);
});
