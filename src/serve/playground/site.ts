/**
 * The playground's pages for `oam serve`'s server: the page, its style sheet and script (built into
 * assets.generated.ts), and `/playground/info.json` (what `"system"` is on this server). Every page response
 * carries a Content-Security-Policy that lets the page reach this server only, so the page has no network
 * access beyond the bridge.
 * @module
 */
import type { PageRoutes } from "../server_config.ts";
import { SERVER_INFO } from "../../protocol/version.ts";
import { plainResponse } from "../http_response.ts";
import { INDEX_HTML, PLAYGROUND_CSS, PLAYGROUND_JS } from "./assets.generated.ts";

/** What the page shows about the server's model. */
export interface PlaygroundModel {
  /** `system`, `scripted`, `openai` or `llama`. */
  name: string;
  /** e.g. "on-device model", "scripted (steps.json)", "http://127.0.0.1:8080/v1#qwen". */
  label: string;
  /** A scripted model's script file, as it was named (`--script <file>`, `OAM_SCRIPT=<file>`). */
  script?: string;
}

/** Content-Security-Policy of the page: scripts, styles and connections to this origin only. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

function asset(body: string, type: string, head: boolean): Response {
  return plainResponse(head ? null : body, {
    headers: {
      "content-type": type,
      "cache-control": "no-store",
      "content-security-policy": CONTENT_SECURITY_POLICY,
      "referrer-policy": "no-referrer",
    },
  });
}

/**
 * The playground's routes: `/` (and `/index.html`), `/playground.css`, `/playground.js` and
 * `/playground/info.json`.
 *
 * @example
 * ```ts
 * import { playgroundPages } from "./site.ts";
 * const pages = playgroundPages({ name: "scripted", label: "scripted (steps.json)" });
 * const page = pages.serve("/", new Request("http://127.0.0.1:1977/"));
 * page?.headers.get("content-type"); // "text/html; charset=utf-8"
 * ```
 */
export function playgroundPages(model: PlaygroundModel): PageRoutes {
  const info = JSON.stringify({ version: SERVER_INFO.version, model });
  return {
    serve(path, request) {
      const head = request.method === "HEAD";
      switch (path) {
        case "/":
        case "/index.html":
          return asset(INDEX_HTML, "text/html; charset=utf-8", head);
        case "/playground.css":
          return asset(PLAYGROUND_CSS, "text/css; charset=utf-8", head);
        case "/playground.js":
          return asset(PLAYGROUND_JS, "text/javascript; charset=utf-8", head);
        case "/playground/info.json":
          return asset(info, "application/json", head);
        default:
          return null;
      }
    },
  };
}
