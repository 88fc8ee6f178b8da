/**
 * Holding back the bridge's messages in the browser's socket, so a test can keep the page in a wait (the model
 * loading, a turn thinking) for as long as it needs, without a timer.
 */
import type { Page } from "npm:playwright-core@1.65.2";

/** Messages held back; `release` sends them on and stops holding. `held` resolves once one is held. */
export interface Hold {
  held: Promise<void>;
  release(): void;
}

/** What to hold: `sent` sees each message the page sends; `holds` says whether a bridge message waits. */
export interface HoldRule {
  sent?(message: { id?: unknown; method?: unknown }): void;
  holds(message: { id?: unknown; method?: unknown }): boolean;
}

/** Holds back the bridge's messages `rule` picks on every `/rpc` socket the page opens from now on. */
export async function holdBridgeMessages(page: Page, rule: HoldRule): Promise<Hold> {
  const waiting: (() => void)[] = [];
  let heldOne: () => void = () => {};
  const held = new Promise<void>((resolve) => heldOne = resolve);
  let released = false;
  await page.routeWebSocket(/\/rpc$/, (ws) => {
    const server = ws.connectToServer();
    ws.onMessage((message) => {
      if (!released) rule.sent?.(JSON.parse(String(message)));
      server.send(message);
    });
    server.onMessage((message) => {
      if (!released && rule.holds(JSON.parse(String(message)))) {
        waiting.push(() => ws.send(message));
        heldOne();
        return;
      }
      ws.send(message);
    });
  });
  return {
    held,
    release() {
      released = true;
      for (const send of waiting.splice(0)) send();
    },
  };
}
