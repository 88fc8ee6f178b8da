/**
 * The raw floor the bridge is compared against: read lines, JSON.parse each, answer `{}` with the same id,
 * writing each chunk's answers in one write. No validation, no dispatch, no sessions.
 *
 * `--answer <json>` answers every request with that result instead of `{}`, its `session` member set to the
 * request's `params.session`: the same floor, writing the bytes the bridge writes for a scripted turn.
 */
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const out = Deno.stdout.writable.getWriter();
const answer = Deno.args[0] === "--answer" ? JSON.parse(Deno.args[1]) : null;
let rest = "";
for await (const chunk of Deno.stdin.readable) {
  const text = rest + decoder.decode(chunk, { stream: true });
  const lines = text.split("\n");
  rest = lines.pop() ?? "";
  const answers: string[] = [];
  for (const line of lines) {
    if (line === "") continue;
    const msg = JSON.parse(line);
    let result = {};
    if (answer !== null) {
      answer.session = msg.params?.session;
      result = answer;
    }
    answers.push(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }));
  }
  if (answers.length > 0) await out.write(encoder.encode(answers.join("\n") + "\n"));
}
await out.close();
