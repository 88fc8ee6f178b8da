/**
 * Tools for the llama backend: what the model is told about (stable), what it may call (per step), and
 * how a call is forced or forbidden.
 *
 * The prompt cache only survives when the rendered prompt keeps its prefix, and the tool list sits in the
 * system message. So the template always documents one stable list per session ({@link DocumentedTools}),
 * while each step restricts what can actually be called: `allowed` offers the step's tools to
 * node-llama-cpp's function calling (its grammar only admits their names and argument schemas),
 * `required` additionally makes the response start in function-calling mode ({@link stepChatWrapper}), and
 * `disallowed` offers none and forbids the token that opens a call ({@link toolCallBias}).
 * @module
 */
import type {
  ChatFunctions,
  ChatWrapper,
  ContextState,
  GbnfSchema,
  LlamaModule,
  TokenBias,
} from "./llama_api.ts";
import type { LlamaRuntime } from "./llama_runtime.ts";
import { takesNoArguments, toolGrammarSchema } from "./llama_schema.ts";
import type { StepTool } from "./language_model.ts";

/**
 * The step's tools as node-llama-cpp functions (argument schemas as grammar schemas; a nested object the
 * client's argument schema leaves open takes any members, see {@link toolGrammarSchema}).
 */
export function chatFunctions(tools: StepTool[]): ChatFunctions {
  const functions: Record<string, { description?: string; params?: GbnfSchema }> = {};
  for (const tool of tools) {
    functions[tool.name] = {
      ...(tool.description !== "" ? { description: tool.description } : {}),
      ...(takesNoArguments(tool.parameters) ? {} : { params: toolGrammarSchema(tool) }),
    };
  }
  return functions;
}

function toolKey(tool: StepTool): string {
  return JSON.stringify([tool.name, tool.description, tool.parameters]);
}

/**
 * The tools a session's prompt documents. A step whose tools are all documented already (the same
 * definitions) keeps the list, so narrowing a step (a forced `{tool}`, `respond_directly` dropped, tools
 * disabled after the last round) leaves the prompt prefix alone; a step with a new or changed tool replaces
 * the list.
 *
 * @example
 * ```ts
 * import { DocumentedTools } from "./llama_tools.ts";
 * const documented = new DocumentedTools();
 * const a = { name: "a", description: "", parameters: {}, jsonSchema: {} };
 * const b = { name: "b", description: "", parameters: {}, jsonSchema: {} };
 * documented.update([a, b]);
 * Object.keys(documented.update([a]) ?? {}); // ["a", "b"]
 * ```
 */
export class DocumentedTools {
  #keys = new Set<string>();
  #functions: ChatFunctions | undefined;

  /** The functions to document for a step offering `tools` (undefined: none). */
  update(tools: StepTool[]): ChatFunctions | undefined {
    if (tools.length > 0 && !tools.every((tool) => this.#keys.has(toolKey(tool)))) {
      this.#keys = new Set(tools.map(toolKey));
      this.#functions = chatFunctions(tools);
    }
    return this.#functions;
  }
}

/**
 * The template for one step: `step.base` rendering `step.documented` whatever node-llama-cpp offers, and with `step.force` starting the
 * response in function-calling mode (the model must pick one of the offered functions).
 */
export function stepChatWrapper(
  module: LlamaModule,
  step: { base: ChatWrapper; documented: ChatFunctions | undefined; force: boolean },
): ChatWrapper {
  const { base, documented, force } = step;
  const wrapper = Object.create(base) as ChatWrapper;
  const generate = base.generateContextState;
  Object.defineProperty(wrapper, "generateContextState", {
    value(this: ChatWrapper, options: Parameters<ChatWrapper["generateContextState"]>[0]): ContextState {
      const state = generate.call(this, {
        ...options,
        availableFunctions: documented,
        documentFunctionParams: true,
      });
      if (!force) return state;
      const { ignoreStartText: _i, functionCall: _f, prefixTriggers: _p, noPrefixTrigger: _n, ...rest } =
        state;
      return {
        ...rest,
        noPrefixTrigger: { type: "functionCall", inject: module.LlamaText([]) },
        detectFunctionCalls: true,
      };
    },
  });
  return wrapper;
}

/** The text that opens a function call in the template (its first line), e.g. `<tool_call>`. */
export function callPrefix(runtime: LlamaRuntime): string {
  const text = (runtime.module.LlamaText(runtime.chatWrapper.settings.functions.call.prefix) as {
    toString(): string;
  }).toString();
  const firstLine = text.split("\n")[0].trim();
  return firstLine === "" ? text : firstLine;
}

const biases = new WeakMap<LlamaRuntime, TokenBias | null>();

/**
 * A bias forbidding the first token of the template's function-call prefix, when that token is a special
 * token (such as `<tool_call>`); plain-text prefixes are left alone (forbidding them would forbid text).
 */
export function toolCallBias(runtime: LlamaRuntime): TokenBias | undefined {
  let bias = biases.get(runtime);
  if (bias === undefined) {
    bias = null;
    const text = callPrefix(runtime);
    const special = runtime.model.tokenize(text, true);
    const plain = runtime.model.tokenize(text, false);
    if (special.length > 0 && special[0] !== plain[0]) {
      bias = new runtime.module.TokenBias(runtime.model.tokenizer).set(special[0], "never");
    }
    biases.set(runtime, bias);
  }
  return bias ?? undefined;
}
