/**
 * The part of node-llama-cpp's API the llama backend uses, declared structurally.
 *
 * The package is never imported statically (not even for its types): a static or literal dynamic import
 * makes `deno check`, `deno test` and every user of `mod.ts` download it (≈ 730 MB with all platform
 * binaries). `llama_runtime.ts` imports it on first use and casts it to {@link LlamaModule}. The GGUF test
 * tier (`tests/llama/gguf/`) exercises every member declared here against the real package; a compile-time
 * check against its `.d.ts` is not possible without fetching it, and its string enums (`LlamaLogLevel`)
 * would not accept these literal types anyway.
 * @module
 */

/** A token id. */
export type Token = number;

/** node-llama-cpp's `LlamaText` value (opaque here). */
export interface LlamaTextValue {
  /** The text's pieces. */
  readonly values: readonly unknown[];
}

/** Tokenizes text the way the model does. */
export interface Tokenizer {
  (text: string, specialTokens?: boolean): Token[];
}

/** JSON-Schema subset node-llama-cpp turns into grammars (its `GbnfJsonSchema`). */
export type GbnfSchema = { readonly [key: string]: unknown };

/** One callable function (its `ChatModelFunctions` entry). */
export interface ChatFunction {
  /** What the function does. */
  readonly description?: string;
  /** Parameters schema. */
  readonly params?: GbnfSchema;
}

/** Functions by name. */
export type ChatFunctions = { readonly [name: string]: ChatFunction };

/** A function call inside a model response, with its result. */
export interface ChatFunctionCallItem {
  /** Item kind. */
  type: "functionCall";
  name: string;
  /** Arguments. */
  params: unknown;
  /** What the function returned. */
  result: unknown;
  /** The tokens the model generated for the call (keeps the prompt identical to the cached one). */
  rawCall?: unknown;
  /** Whether this call starts a new batch of parallel calls. */
  startsNewChunk?: boolean;
}

/** A chat history item (`ChatHistoryItem`). */
export type ChatItem =
  | { type: "system"; text: string }
  | { type: "user"; text: string }
  | { type: "model"; response: Array<string | ChatFunctionCallItem> };

/** A chat wrapper (prompt template); only what the backend reads or overrides. */
export interface ChatWrapper {
  /** Template name. */
  readonly wrapperName: string;
  /** Function-calling syntax of the template. */
  readonly settings: { readonly functions: { readonly call: { readonly prefix: unknown } } };
  /** Renders a history into the text to evaluate. */
  generateContextState(options: {
    chatHistory: readonly ChatItem[];
    availableFunctions?: ChatFunctions;
    documentFunctionParams?: boolean;
  }): ContextState;
}

/** What {@link ChatWrapper.generateContextState} returns (only the members the backend touches). */
export interface ContextState {
  /** The rendered prompt. */
  contextText: LlamaTextValue;
  /** Other members, passed through. */
  [key: string]: unknown;
}

/** A grammar (opaque). */
export interface LlamaGrammar {
  /** The GBNF text. */
  readonly grammar: string;
  /** Texts that end the generation (a JSON-schema grammar's: four newlines). */
  readonly stopGenerationTriggers: readonly unknown[];
  /** Whether trailing whitespace is trimmed from the answer. */
  readonly trimWhitespaceSuffix: boolean;
}

/** Counters of a sequence: tokens evaluated as input and generated as output, cumulative. */
export interface TokenMeter {
  /** Prompt tokens evaluated so far. */
  readonly usedInputTokens: number;
  /** Tokens generated so far. */
  readonly usedOutputTokens: number;
}

/** One sequence of a context: its own KV cache. */
export interface LlamaContextSequence {
  /** The tokens whose state is in the KV cache. */
  readonly contextTokens: Token[];
  /** Cumulative token counts. */
  readonly tokenMeter: TokenMeter;
  /** Whether the sequence was disposed. */
  readonly disposed: boolean;
  /** Drops the cached state. */
  clearHistory(): Promise<void>;
  /** Frees the sequence. */
  dispose(): void;
}

/** A context: KV memory shared by a number of sequences. */
export interface LlamaContext {
  /** Tokens each sequence can hold. */
  readonly contextSize: number;
  /** Sequences not handed out yet. */
  readonly sequencesLeft: number;
  /** Hands out a sequence. */
  getSequence(): LlamaContextSequence;
  /** Frees the context. */
  dispose(): Promise<void>;
}

/** A loaded model file. */
export interface LlamaModel {
  /** Context size the model was trained with. */
  readonly trainContextSize: number;
  readonly tokenizer: Tokenizer;
  /** GGUF metadata (`general.name`, …). */
  readonly fileInfo: { readonly metadata: { readonly general?: { readonly name?: string } } };
  /** Tokenizes text. */
  tokenize(text: string, specialTokens?: boolean): Token[];
  /** Creates a context. */
  createContext(options: {
    contextSize?: number | { min?: number; max?: number };
    sequences?: number;
    threads?: number;
    batchSize?: number;
  }): Promise<LlamaContext>;
  /** Frees the model. */
  dispose(): Promise<void>;
}

/** The llama.cpp binding. */
export interface Llama {
  /** CPU cores llama.cpp uses for math. */
  readonly cpuMathCores: number;
  /** The GPU type in use, or false. */
  readonly gpu: string | false;
  /** Loads a model file. */
  loadModel(options: { modelPath: string; gpuLayers?: "auto" | number }): Promise<LlamaModel>;
  /** A grammar that makes the model write JSON valid against a schema. */
  createGrammarForJsonSchema(schema: GbnfSchema): Promise<LlamaGrammar>;
  /** A grammar from GBNF text (throws when llama.cpp cannot parse it). */
  createGrammar(options: {
    grammar: string;
    stopGenerationTriggers?: readonly unknown[];
    trimWhitespaceSuffix?: boolean;
  }): Promise<LlamaGrammar>;
  /** Frees the binding. */
  dispose(): Promise<void>;
}

/** A function call the model made. */
export interface ChatResponseFunctionCall {
  /** Function name. */
  functionName: string;
  /** Parsed arguments. */
  params: unknown;
  /** The generated text of the call. */
  raw: unknown;
}

/** Options of {@link LlamaChat.generateResponse} the backend uses. */
export interface GenerateOptions {
  onTextChunk?: (text: string) => void;
  signal?: AbortSignal;
  stopOnAbortSignal?: boolean;
  maxTokens?: number;
  temperature?: number;
  topK?: number;
  topP?: number;
  seed?: number;
  grammar?: LlamaGrammar;
  tokenBias?: TokenBias;
  customStopTriggers?: string[];
  functions?: ChatFunctions;
  documentFunctionParams?: boolean;
  maxParallelFunctionCalls?: number;
  /** Each piece of a function call's parameters (JSON text) as it is generated. */
  onFunctionCallParamsChunk?: (
    chunk: { callIndex: number; functionName: string; paramsChunk: string; done: boolean },
  ) => void;
  contextShift?: {
    strategy?: (options: { chatHistory: readonly ChatItem[]; maxTokensCount: number }) => {
      chatHistory: ChatItem[];
      metadata?: object | null;
    };
  };
}

/** The result of {@link LlamaChat.generateResponse}. */
export interface ChatResponse {
  /** The answer text (without thought segments). */
  response: string;
  /** Function calls, when the model made any. */
  functionCalls?: ChatResponseFunctionCall[];
  /** Why generation stopped. */
  metadata: { stopReason: string };
}

/** node-llama-cpp's stateless chat over one sequence. */
export interface LlamaChat {
  /** Generates the next model response of a history (reusing the sequence's cached prefix). */
  generateResponse(history: ChatItem[], options?: GenerateOptions): Promise<ChatResponse>;
  /** Detaches from the sequence (keeps the sequence). */
  dispose(options?: { disposeSequence?: boolean }): void;
}

/** node-llama-cpp's stateful chat session (used by the benchmark's direct baseline). */
export interface LlamaChatSession {
  /** Sends a user prompt and returns the answer. */
  prompt(text: string, options?: GenerateOptions): Promise<string>;
  /** Detaches from the sequence. */
  dispose(options?: { disposeSequence?: boolean }): void;
}

/** Token probability adjustments (`TokenBias`). */
export interface TokenBias {
  /** Sets the bias of a token; `"never"` forbids it. */
  set(input: Token | Token[] | string, bias: "never" | number): TokenBias;
}

/** The module's exports the backend uses. */
export interface LlamaModule {
  /** Loads the llama.cpp binding. */
  getLlama(options: {
    gpu?: "auto" | false | "cuda" | "vulkan" | "metal";
    build?: "never";
    logLevel?: "disabled" | "fatal" | "error" | "warn" | "info" | "log" | "debug";
    logger?: (level: string, message: string) => void;
    progressLogs?: boolean;
  }): Promise<Llama>;
  /** Picks the chat template of a model. */
  resolveChatWrapper(model: LlamaModel): ChatWrapper;
  /** Builds a `LlamaText` from pieces. */
  LlamaText: (values: unknown) => LlamaTextValue;
  /** The chat class. */
  LlamaChat: new (options: { contextSequence: LlamaContextSequence; chatWrapper?: ChatWrapper }) => LlamaChat;
  /** Token bias class. */
  TokenBias: new (tokenizer: Tokenizer) => TokenBias;
  /** The session class (benchmark baseline). */
  LlamaChatSession: new (options: {
    contextSequence: LlamaContextSequence;
    chatWrapper?: ChatWrapper;
    systemPrompt?: string;
  }) => LlamaChatSession;
}
