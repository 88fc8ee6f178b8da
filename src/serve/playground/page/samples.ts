/**
 * The persona and script a first visit starts with: Mira the innkeeper, with a client tool the designer
 * answers, a world she can write to, memory tools, and a three-turn script that exercises all of it.
 * @module
 */
import type { Saved } from "./storage.ts";

/** The starting persona file (JSONC, as `personas/*.jsonc`). */
export const SAMPLE_PERSONA =
  `// A persona file: the keys of npc/create, as 'oam npc' and loadPersona read them.
// Edit it here or in the form; the two stay in sync (comments survive form edits).
{
  "npc": "mira",
  "persona": {
    "name": "Mira",
    "role": "the innkeeper of the Rusty Tankard",
    "personality": "Warm and quick-witted; never gives credit.",
    "speakingStyle": "Short, friendly sentences.",
    "goals": ["Sell food and drink", "Keep the peace"],
    "secrets": ["She waters down the ale on busy nights."],
    "defaultEmotion": "happy"
  },
  "options": {
    // Let her remember things and change her mind about the player.
    "memoryTools": ["rememberFact", "changeRelationship"],
    // She may take the player's money.
    "worldWritable": ["player.gold"]
  },
  "tools": [
    {
      "name": "check_stock",
      "description": "How many of an item the inn has left and its price in gold.",
      "parameters": {
        "type": "object",
        "properties": { "item": { "type": "string", "description": "e.g. 'ale', 'stew'" } },
        "required": ["item"]
      }
    }
  ],
  // The NPC's world: read_world_state and update_world_state work on it.
  "world": { "player": { "name": "Aria", "gold": 20 }, "inn": { "open": true } },
  "greeting": "A traveller walks in from the rain."
}
`;

/** The starting script (a scripted model: each model step plays the next step). */
export const SAMPLE_SCRIPT = `{
  "steps": [
    { "toolCalls": [{ "name": "check_stock", "arguments": { "item": "ale" } }] },
    {
      "json": {
        "emotion": "happy",
        "line": "Ale's on tap, four gold a mug. Want one?",
        "player_options": ["One ale, please.", "Too pricey.", "What else is there?"],
        "ends_conversation": false
      }
    },
    {
      "toolCalls": [
        { "name": "update_world_state", "arguments": { "path": "player.gold", "value": 16 } },
        { "name": "change_relationship", "arguments": { "delta": 5, "reason": "paid up front" } },
        { "name": "remember_fact", "arguments": { "fact": "Aria drinks ale." } }
      ]
    },
    {
      "json": {
        "emotion": "grateful",
        "line": "Here you go, love. Mind the foam.",
        "player_options": ["Thanks!", "Any news?", "Goodbye."],
        "ends_conversation": false
      }
    },
    {
      "json": {
        "emotion": "amused",
        "line": "Off with you, then. Come back when it rains.",
        "player_options": ["Bye!", "Wait!", "One more."],
        "ends_conversation": true
      }
    }
  ],
  "fallback": {
    "json": {
      "emotion": "confused",
      "line": "(The script has no more steps: add some in the Model tab.)",
      "player_options": ["Restart", "Add steps", "Bark"],
      "ends_conversation": false
    }
  }
}
`;

/** What the page starts with on a first visit (a sample persona on its script); a new object each time. */
export function firstVisit(): Saved {
  return {
    doc: SAMPLE_PERSONA,
    script: SAMPLE_SCRIPT,
    useScript: true,
    modelChosen: false,
    answers: {},
    drafts: {},
    line: "",
    context: "",
    situation: "",
    lastState: null,
    logOpen: false,
  };
}
