/**
 * The text an NPC shows the model: instructions rendered from the persona, the framed turn prompt, the
 * plain-text retry prompt, the bark prompt and the memory summary request.
 *
 * The instructions depend on the persona, the options and the tools only, never on memory: they stay
 * byte-identical turn after turn, so a model's prompt cache keeps them. What changes (attitude, facts, an
 * unlocked secret, summaries, world values) reaches the model in the turn's prompt (see npc_context.ts).
 * @module
 */
import { compactJson } from "../../protocol/json.ts";
import type { ToolRecord } from "../../agent/types.ts";
import { modelVisibleOutput } from "../../agent/tool_runtime.ts";
import type { Persona } from "./persona.ts";
import { listSentence, sentence } from "./prose.ts";

/** Whether the persona's secrets are in the prompt, and how. */
export type SecretVisibility = "hidden" | "guarded" | "shareable";

/** What the instructions depend on besides the persona. */
export interface InstructionSettings {
  /** Sentence limit (the persona's, or 1 for barks). */
  maxSentences: number;
  /** True when the NPC has tools that look facts up (any tool that is not a memory tool). */
  hasFactTools: boolean;
  /** Whether and how the secrets appear. */
  secrets: SecretVisibility;
  /** Extra lines appended to the rules (`options.extraInstructions`). */
  extraInstructions: string | null;
  /** The NPC has `remember_fact`. */
  rememberFact: boolean;
  /** The NPC has `change_relationship`. */
  changeRelationship: boolean;
  /** Ask for a leading `[emotion]` tag (replyFormat `text`). */
  emotionTag: boolean;
}

/** Secret visibility for a relationship and the unlock threshold (null → guarded). */
export function secretVisibility(relationship: number, unlockAt: number | null): SecretVisibility {
  if (unlockAt === null) return "guarded";
  return relationship >= unlockAt ? "shareable" : "hidden";
}

/** "Your secret: …" for the persona's secrets, or null when it has none. */
export function secretSentence(persona: Persona): string | null {
  const secrets = listSentence(persona.secrets);
  return secrets === "" ? null : `Your secret: ${secrets}`;
}

/** The NPC's instructions (lines joined with "\n"). */
export function renderInstructions(persona: Persona, s: InstructionSettings): string {
  const lines: string[] = [];
  const role = persona.role.trim();
  lines.push(`You are ${persona.name}${role === "" ? "" : `, ${role}`}, a character in a video game.`);
  if (persona.personality.trim() !== "") lines.push(`Personality: ${sentence(persona.personality)}`);
  if (persona.speakingStyle.trim() !== "") lines.push(`Speaking style: ${sentence(persona.speakingStyle)}`);
  if (persona.backstory.trim() !== "") lines.push(`Background: ${sentence(persona.backstory)}`);
  const goals = listSentence(persona.goals);
  if (goals !== "") lines.push(`Goals: ${goals}`);
  const knowledge = listSentence(persona.knowledge);
  if (knowledge !== "") lines.push(`You know: ${knowledge}`);
  const secrets = listSentence(persona.secrets);
  const showSecrets = secrets !== "" && s.secrets !== "hidden";
  if (showSecrets) lines.push(`Your secret: ${secrets}`);
  lines.push("Rules:");
  lines.push(`- Stay in character as ${persona.name}. Never call yourself an AI, a model or an assistant.`);
  const n = Math.max(1, s.maxSentences);
  lines.push(`- Answer in ${n === 1 ? "one short sentence" : `at most ${n} short sentences`}.`);
  lines.push(
    s.hasFactTools
      ? "- Look up facts about the world (items, prices, people, places) with your tools. Never make them up."
      : "- When you do not know a fact about the world, say so in character. Never make it up.",
  );
  if (showSecrets) {
    lines.push(
      s.secrets === "guarded"
        ? "- Keep your secret to yourself unless the player has truly earned your trust."
        : "- The player has earned your trust; you may reveal your secret if they ask.",
    );
  }
  const extra = s.extraInstructions?.trim() ?? "";
  if (extra !== "") lines.push(extra);
  if (s.rememberFact) {
    lines.push("- When the player tells you something worth remembering, call remember_fact.");
  }
  if (s.changeRelationship) {
    lines.push("- When the player clearly pleases or offends you, call change_relationship.");
  }
  if (s.emotionTag) {
    lines.push(`- Start every reply with your current emotion in square brackets, like ${TAG_EXAMPLE}.`);
  }
  return lines.join("\n");
}

const TAG_EXAMPLE = "[happy] or [angry]";

/** Parts of a turn prompt. */
export interface PromptParts {
  /** Lines of the "Memory:" block (what changed; none = no block). */
  memory?: readonly string[];
  /** `path: value` lines of the "Game state:" block (none = no block). */
  world: readonly string[];
  /** What is happening right now, or null. */
  situation: string | null;
  /** What the player says ("" = nothing). */
  line: string;
}

/** The framed prompt: "Memory:" block, "Game state:" block, "Situation: …", then "Player: …". */
export function framePrompt(parts: PromptParts): string {
  const out: string[] = [];
  if (parts.memory !== undefined && parts.memory.length > 0) {
    out.push(["Memory:", ...parts.memory].join("\n"));
  }
  if (parts.world.length > 0) out.push(`Game state:\n${parts.world.join("\n")}`);
  if (parts.situation !== null && parts.situation.trim() !== "") {
    out.push(`Situation: ${parts.situation.trim()}`);
  }
  out.push(parts.line.trim() === "" ? "Player: (The player says nothing.)" : `Player: ${parts.line}`);
  return out.join("\n");
}

/** Most tool results quoted in a retry prompt, and the longest quoted output. */
const RETRY_FACTS = 6;
const RETRY_FACT_CHARS = 400;

/**
 * The prompt of the plain-text retry after a blocked structured reply: the original framed prompt, the
 * facts the blocked attempt looked up (non-error tool results), and the reply format.
 */
export function retryPrompt(framed: string, records: readonly ToolRecord[]): string {
  const out = [framed];
  const facts = records.filter((r) => !r.isError).slice(0, RETRY_FACTS);
  if (facts.length > 0) {
    out.push("Facts you just looked up:");
    for (const r of facts) {
      const text = Array.from(modelVisibleOutput(r)).slice(0, RETRY_FACT_CHARS).join("");
      out.push(`- ${r.call.name} ${compactJson(r.call.arguments)} → ${text}`);
    }
  }
  out.push(
    `Reply in character with a short spoken line. Start with your emotion in square brackets, like ${TAG_EXAMPLE}.`,
  );
  return out.join("\n");
}

/** Situation of a bark without one. */
export const DEFAULT_BARK_SITUATION = "An ordinary moment.";

/**
 * The request for an NPC's memory summary, asked as the next message of its own conversation (so the
 * model's prompt cache covers everything before it); the answer is stored, not added to the conversation.
 */
export function summaryRequest(name: string): string {
  return `(Out of character: the game is saving ${name}'s memory of this conversation. Write it now as a ` +
    `summary of everything so far, including what ${name} remembered from earlier conversations. When ` +
    `${name}'s turns are JSON, only their "line" was said out loud. Keep names, promises, deals, items, ` +
    `prices, facts learned and how ${name} feels about the player. Write at most 100 words of plain prose ` +
    `in the third person, not in character and not as JSON.)`;
}
