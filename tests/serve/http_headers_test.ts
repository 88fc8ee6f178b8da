/**
 * The headers every answer carries, read off the wire: `X-Content-Type-Options: nosniff` on JSON answers,
 * errors (4xx and 5xx), event streams, health and the playground's files, with `Content-Length` kept on
 * every answer whose body is known in advance.
 */
import assert from "node:assert/strict";
import { UnavailableModel } from "../../src/models/unavailable.ts";
import { playgroundPages } from "../../src/serve/playground/site.ts";
import { rawHttp, script, serve } from "./serve_fixture.ts";

/** The headers of a raw answer by lowercase name. */
function headersOf(raw: { headers: string }): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of raw.headers.split("\r\n").slice(1)) {
    const colon = line.indexOf(":");
    map.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return map;
}

const utf8Length = (text: string) => new TextEncoder().encode(text).length;
const HOST = "Host: 127.0.0.1";
const chat = (stream: boolean) =>
  JSON.stringify({ model: "system", messages: [{ role: "user", content: "x" }], stream });

Deno.test("headers: every answer says nosniff; Content-Length stays on every answer that is not a stream", async () => {
  await using s = await serve(script({ text: "Hi." }, { text: "Ho." }), {
    apiKey: "k",
    allowedOrigins: ["*"],
    pages: playgroundPages({ name: "scripted", label: "scripted (steps.json)" }),
  });
  await using down = await serve(new UnavailableModel("model_not_ready"));
  const key = "Authorization: Bearer k";
  const json = "Content-Type: application/json";
  // [what, port, request head, body, status, has Content-Length]
  const cases: Array<[string, number, string, string, number, boolean]> = [
    ["health", s.server.port!, `GET /health HTTP/1.1\r\n${HOST}`, "", 200, true],
    ["HEAD health", s.server.port!, `HEAD /health HTTP/1.1\r\n${HOST}`, "", 200, true],
    ["models", s.server.port!, `GET /v1/models HTTP/1.1\r\n${HOST}\r\n${key}`, "", 200, true],
    [
      "models with CORS",
      s.server.port!,
      `GET /v1/models HTTP/1.1\r\n${HOST}\r\n${key}\r\nOrigin: http://example.test`,
      "",
      200,
      true,
    ],
    [
      "completion",
      s.server.port!,
      `POST /v1/chat/completions HTTP/1.1\r\n${HOST}\r\n${key}\r\n${json}`,
      chat(false),
      200,
      true,
    ],
    [
      "stream",
      s.server.port!,
      `POST /v1/chat/completions HTTP/1.1\r\n${HOST}\r\n${key}\r\n${json}`,
      chat(true),
      200,
      false,
    ],
    ["401", s.server.port!, `GET /v1/models HTTP/1.1\r\n${HOST}`, "", 401, true],
    ["404", s.server.port!, `GET /nowhere HTTP/1.1\r\n${HOST}`, "", 404, true],
    ["405", s.server.port!, `DELETE /v1/models HTTP/1.1\r\n${HOST}\r\n${key}`, "", 405, true],
    [
      "400",
      s.server.port!,
      `POST /v1/chat/completions HTTP/1.1\r\n${HOST}\r\n${key}\r\n${json}`,
      "{",
      400,
      true,
    ],
    ["503 health", down.server.port!, `GET /health HTTP/1.1\r\n${HOST}`, "", 503, true],
    [
      "503 completion",
      down.server.port!,
      `POST /v1/chat/completions HTTP/1.1\r\n${HOST}\r\n${json}`,
      chat(false),
      503,
      true,
    ],
    [
      "503 stream",
      down.server.port!,
      `POST /v1/chat/completions HTTP/1.1\r\n${HOST}\r\n${json}`,
      chat(true),
      503,
      true,
    ],
    ["page", s.server.port!, `GET / HTTP/1.1\r\n${HOST}`, "", 200, true],
    ["style sheet", s.server.port!, `GET /playground.css HTTP/1.1\r\n${HOST}`, "", 200, true],
    ["script", s.server.port!, `GET /playground.js HTTP/1.1\r\n${HOST}`, "", 200, true],
    ["page info", s.server.port!, `GET /playground/info.json HTTP/1.1\r\n${HOST}`, "", 200, true],
    [
      "preflight",
      s.server.port!,
      `OPTIONS /v1/models HTTP/1.1\r\n${HOST}\r\nOrigin: http://example.test`,
      "",
      204,
      false,
    ],
  ];
  for (const [what, port, head, body, status, sized] of cases) {
    const answer = await rawHttp(port, head, body);
    const headers = headersOf(answer);
    assert.equal(answer.status, status, what);
    assert.equal(headers.get("x-content-type-options"), "nosniff", what);
    // A HEAD answer has the length of the body it leaves out.
    const length = head.startsWith("HEAD ") ? headers.get("content-length") : String(utf8Length(answer.body));
    if (sized) assert.equal(headers.get("content-length"), length, what);
    else assert.equal(headers.has("content-length"), false, what);
    if (head.startsWith("HEAD ")) assert.match(length ?? "", /^[1-9][0-9]*$/, what);
  }
});
