/**
 * The playground's pages on `oam serve`'s server: the page, its style sheet and script with a
 * Content-Security-Policy that lets the page reach this server only; the page's own origin may open `/rpc`
 * (other origins and other hosts may not), and a server without pages keeps refusing that origin.
 */
import assert from "node:assert/strict";
import { INDEX_HTML, PLAYGROUND_CSS, PLAYGROUND_JS } from "../../../src/serve/playground/assets.generated.ts";
import { CONTENT_SECURITY_POLICY, playgroundPages } from "../../../src/serve/playground/site.ts";
import { OpenAIServer } from "../../../src/serve/openai_server.ts";
import { script, serve } from "../serve_fixture.ts";

const pages = playgroundPages({ name: "scripted", label: "scripted: steps.json" });

Deno.test("the page, its style sheet and script, and what the server's model is", async () => {
  await using served = await serve(script({ text: "Hi." }), { pages });
  const expect = async (path: string, type: string, body: string) => {
    const response = await fetch(`${served.base}${path}`);
    assert.equal(response.status, 200, path);
    assert.equal(response.headers.get("content-type"), type);
    assert.equal(response.headers.get("content-security-policy"), CONTENT_SECURITY_POLICY);
    assert.equal(response.headers.get("x-content-type-options"), "nosniff");
    assert.equal(await response.text(), body);
  };
  await expect("/", "text/html; charset=utf-8", INDEX_HTML);
  await expect("/index.html", "text/html; charset=utf-8", INDEX_HTML);
  await expect("/playground.css", "text/css; charset=utf-8", PLAYGROUND_CSS);
  await expect("/playground.js", "text/javascript; charset=utf-8", PLAYGROUND_JS);
  await expect(
    "/playground/info.json",
    "application/json",
    JSON.stringify({ version: "0.1.0", model: { name: "scripted", label: "scripted: steps.json" } }),
  );
  const head = await fetch(`${served.base}/playground.js`, { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), "");
  const missing = await fetch(`${served.base}/playground/nope.js`);
  assert.equal(missing.status, 404);
  assert.equal((await missing.json()).error.code, "unknown_url");
  const post = await fetch(`${served.base}/`, { method: "POST", body: "{}" });
  assert.equal(post.status, 404);
  await post.body?.cancel();
});

Deno.test("the policy allows this origin only: scripts, styles and connections", () => {
  assert.equal(
    CONTENT_SECURITY_POLICY,
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
      "form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
  );
  assert.equal(/https?:|ws:|\*/.test(CONTENT_SECURITY_POLICY), false);
});

/**
 * The status of a plain GET of /rpc with exactly these Host and Origin headers, over a raw connection (fetch
 * does not let a test choose the Host). Without an upgrade it is 426 once the host and origin checks passed.
 */
async function rpcStatus(base: string, host: string, origin: string): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(new URL(base).port) });
  try {
    const request = `GET /rpc HTTP/1.1\r\nHost: ${host}\r\nOrigin: ${origin}\r\nConnection: close\r\n\r\n`;
    await conn.write(new TextEncoder().encode(request));
    const buffer = new Uint8Array(64);
    let text = "";
    while (!text.includes("\r\n")) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
    }
    return Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
  } finally {
    conn.close();
  }
}

Deno.test("the page's own origin may open /rpc; another origin or host may not", async () => {
  await using served = await serve(script({ text: "Hi." }), { pages });
  const port = new URL(served.base).port;
  const local = `127.0.0.1:${port}`;
  assert.equal(await rpcStatus(served.base, local, served.base), 426);
  assert.equal(await rpcStatus(served.base, `localhost:${port}`, `http://localhost:${port}`), 426);
  assert.equal(await rpcStatus(served.base, local, "http://evil.example"), 403);
  assert.equal(
    await rpcStatus(served.base, local, `http://localhost:${port}`),
    403,
    "origin and host differ",
  );
  assert.equal(
    await rpcStatus(served.base, `evil.example:${port}`, `http://evil.example:${port}`),
    421,
    "a rebinding host is refused before its origin is looked at",
  );
});

Deno.test("with any host allowed, or without a socket, the page's origin needs --allow-origin like any other", async () => {
  await using anyHost = await serve(script({ text: "Hi." }), { pages, allowedHosts: ["*"] });
  const local = new URL(anyHost.base).host;
  assert.equal(await rpcStatus(anyHost.base, local, anyHost.base), 403, "no Host check: no own origin");
  await using granted = await serve(script({ text: "Hi." }), {
    pages,
    allowedHosts: ["*"],
    allowedOrigins: ["*"],
  });
  assert.equal(await rpcStatus(granted.base, new URL(granted.base).host, granted.base), 426, "granted");
  const direct = new OpenAIServer({ models: new Map([["system", script({ text: "Hi." })]]), pages });
  const origin = "http://127.0.0.1:1976";
  const rpc = await direct.handle(
    new Request(`${origin}/rpc`, { headers: { origin, upgrade: "websocket" } }),
  );
  assert.deepEqual([rpc.status, (await rpc.json()).error.code], [403, "origin_not_allowed"]);
});

Deno.test("without pages, a browser origin still needs --allow-origin (oam serve unchanged)", async () => {
  await using served = await serve(script({ text: "Hi." }));
  assert.equal(await rpcStatus(served.base, new URL(served.base).host, served.base), 403);
  const page = await fetch(`${served.base}/`);
  assert.equal(page.status, 404);
  await page.body?.cancel();
});
