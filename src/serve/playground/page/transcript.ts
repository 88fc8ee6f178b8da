/**
 * The earlier turns of a restored NPC, read from its saved transcript (FoundationModels' JSON form): what
 * the player said, the tools the NPC called and what it replied (a structured reply or "[emotion] line").
 * Pure: no DOM.
 * @module
 */
import { isJsonObject, type JsonObject, type JsonValue } from "../../../protocol/json.ts";

/** One shown entry. */
export interface HistoryEntry {
  /** Who. */
  who: "player" | "npc" | "tool";
  /** What. */
  text: string;
  /** The NPC's emotion, when known. */
  emotion?: string;
}

function contents(entry: JsonObject): JsonObject[] {
  return Array.isArray(entry.contents) ? entry.contents.filter(isJsonObject) : [];
}

/** The shown entries of a saved transcript (`npc/state`'s `transcript`, or its inner `transcript`). */
export function historyOf(transcript: JsonValue | undefined): HistoryEntry[] {
  if (!isJsonObject(transcript)) return [];
  const inner = isJsonObject(transcript.transcript) ? transcript.transcript : transcript;
  const entries = Array.isArray(inner.entries) ? inner.entries.filter(isJsonObject) : [];
  const out: HistoryEntry[] = [];
  for (const entry of entries) {
    if (entry.role === "user") {
      const text = contents(entry).map((c) => typeof c.text === "string" ? c.text : "").join("\n").trim();
      const said = /(?:^|\n)Player: ([\s\S]*)$/.exec(text);
      out.push({ who: "player", text: said ? said[1] : text });
    } else if (entry.role === "response") {
      if (Array.isArray(entry.toolCalls)) {
        for (const call of entry.toolCalls.filter(isJsonObject)) {
          if (typeof call.name === "string" && call.name !== "respond_directly") {
            out.push({
              who: "tool",
              text: `${call.name}(${
                typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {})
              })`,
            });
          }
        }
      }
      for (const c of contents(entry)) {
        if (isJsonObject(c.structure) && isJsonObject(c.structure.content)) {
          const reply = c.structure.content;
          out.push({
            who: "npc",
            text: typeof reply.line === "string" ? reply.line : JSON.stringify(reply),
            ...(typeof reply.emotion === "string" ? { emotion: reply.emotion } : {}),
          });
        } else if (typeof c.text === "string" && c.text.trim() !== "") {
          const tagged = /^\s*\[([A-Za-z]+)\]\s*([\s\S]*)$/.exec(c.text);
          out.push(
            tagged
              ? { who: "npc", text: tagged[2], emotion: tagged[1].toLowerCase() }
              : { who: "npc", text: c.text },
          );
        }
      }
    }
  }
  return out;
}
