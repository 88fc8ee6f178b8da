// OpenAppleModels.cs - C# client for the open-apple-models bridge (Unity, Mono, .NET).
//
// Spawns the bridge (`oam stdio`, or `deno run ... cli.ts stdio`) with System.Diagnostics.Process and speaks
// its JSON-RPC 2.0 protocol, one JSON object per line. No UnityEngine types and no third-party JSON library:
// this file compiles on plain Mono (`mcs`) and .NET. OamBridgeBehaviour.cs adapts it to a MonoBehaviour.
//
// Threading: a background thread reads the bridge's stdout, another writes its stdin: sending a request or
// notification only queues the line, so it never blocks the caller, even on a bridge that stopped reading (frozen,
// stopped in a debugger) with its input pipe full (the lines wait in memory until it reads again or is closed, up to
// four of the longest lines the bridge reads, 64 MiB by default: past it a request fails with -32010 busy and Notify
// throws it).
// Every callback (tool handlers, a tool's cancellation token, text/line/event callbacks, world changes,
// notifications, LogReceived) and every request's completion is posted to the bridge's dispatcher. In Unity use an OamMainThreadQueue and call Pump() from Update()
// (OamBridgeBehaviour does), so callbacks run on the main thread, in protocol order (a request's events before
// its response); code after `await` resumes on the main thread through Unity's SynchronizationContext (a plain
// ContinueWith runs on the thread pool). Never block the main thread on a bridge Task (.Result / .Wait()): the
// completion is delivered by Pump(), so that deadlocks.
//
// Which bridge is started: the command passed to the constructor, else OAM_BRIDGE_COMMAND (whole command
// line, split on whitespace), else OAM_BRIDGE_PATH (a compiled `oam`; runs "<path> stdio"), else "oam stdio".
// Spawning processes works on desktop platforms (macOS editor and standalone), not on iOS or consoles.
//
// The bridge is started with OAM_EXIT_WITH_PARENT=1 unless the game's environment has the variable already
// (Environment.SetEnvironmentVariable("OAM_EXIT_WITH_PARENT", "0") before Start() turns it off): when the
// editor or the game is killed or crashes, the bridge cancels its turns and exits instead of running them on
// for nobody and taking CPU from the relaunched game (macOS and Linux; on Windows the bridge cannot see its
// parent exit, and ends as at end of input).

using System;
using System.Collections;
using System.Collections.Generic;
using System.Diagnostics;
using System.Globalization;
using System.IO;
using System.Reflection;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace OpenAppleModels
{
    // ------------------------------------------------------------------------------------------------
    // JSON
    // ------------------------------------------------------------------------------------------------

    /// <summary>A JSON object. Keys keep insertion order; typed getters return defaults when absent.</summary>
    public sealed class JsonObject : Dictionary<string, object>
    {
        public JsonObject() : base(StringComparer.Ordinal) { }

        /// <summary>Adds a member and returns this object (for fluent construction).</summary>
        public JsonObject With(string key, object value) { this[key] = value; return this; }

        public object Get(string key) { object value; return TryGetValue(key, out value) ? value : null; }
        public string GetString(string key) { return Get(key) as string; }
        public JsonObject GetObject(string key) { return Get(key) as JsonObject; }
        public List<object> GetArray(string key) { return Get(key) as List<object>; }
        public bool GetBool(string key) { object v = Get(key); return v is bool && (bool)v; }
        public long GetLong(string key, long fallback = 0)
        {
            object v = Get(key);
            if (v is long) return (long)v;
            if (v is double) return (long)(double)v;
            return fallback;
        }
        public double GetDouble(string key, double fallback = 0)
        {
            object v = Get(key);
            if (v is long) return (long)v;
            if (v is double) return (double)v;
            return fallback;
        }

        public override string ToString() { return Json.Serialize(this); }
    }

    /// <summary>
    /// Minimal JSON: Parse gives JsonObject, List&lt;object&gt;, string, long (integers), double, bool or null.
    /// Serialize accepts those plus any number type, IDictionary, IEnumerable, DateTime/DateTimeOffset (ISO 8601
    /// strings), Guid, TimeSpan and (via reflection) the public properties and fields of other objects, e.g.
    /// anonymous types; structs with public fields (Vector3, Color, Quaternion) write only those fields; an OamNpc,
    /// OamWorld or OamSession writes its id (DecideAsync(actor: gorm) decides as that NPC). NaN,
    /// Infinity and a Task throw ArgumentException (a tool handler returning one gives the model an error output).
    /// </summary>
    public static class Json
    {
        const int MaxDepth = 256;

        /// <summary>
        /// A value written as JSON null. A request argument left at C# null is left out of the request; where the
        /// bridge gives null a meaning of its own, send this: RestoreNpcAsync(save, world: Json.Null) restores the
        /// NPC without its saved world, options: Json.Null with default options. (Parse gives C# null for null.)
        /// </summary>
        public static readonly object Null = new JsonNull();

        sealed class JsonNull
        {
            public override string ToString() { return "null"; }
        }

        public static object Parse(string text)
        {
            if (text == null) throw new FormatException("JSON text is null.");
            var parser = new Parser(text);
            parser.SkipSpace();
            object value = parser.Value(0);
            parser.SkipSpace();
            if (parser.Position != text.Length) throw parser.Error("unexpected trailing characters");
            return value;
        }

        public static string Serialize(object value)
        {
            var builder = new StringBuilder();
            Write(builder, value, 0);
            return builder.ToString();
        }

        static void Write(StringBuilder b, object value, int depth)
        {
            if (depth > MaxDepth) throw new ArgumentException("The value nests too deeply (or contains a cycle).");
            if (value == null || value == Null) { b.Append("null"); return; }
            var s = value as string;
            if (s != null) { WriteString(b, s); return; }
            if (value is bool) { b.Append((bool)value ? "true" : "false"); return; }
            if (value is Task) throw new ArgumentException("A Task is not a JSON value: await it and use its result.");
            // Handles stand for their ids: DecideAsync(actor: gorm), RequestAsync(..., O().With("world", village)).
            if (value is OamNpc) { WriteString(b, ((OamNpc)value).Id); return; }
            if (value is OamWorld) { WriteString(b, ((OamWorld)value).Id); return; }
            if (value is OamSession) { WriteString(b, ((OamSession)value).Id); return; }
            if (value is char) { WriteString(b, value.ToString()); return; }
            if (value is int || value is long || value is short || value is byte || value is sbyte || value is uint
                || value is ushort || value is ulong)
            {
                b.Append(Convert.ToString(value, CultureInfo.InvariantCulture));
                return;
            }
            if (value is double || value is float || value is decimal)
            {
                double d = Convert.ToDouble(value, CultureInfo.InvariantCulture);
                if (double.IsNaN(d) || double.IsInfinity(d))
                    throw new ArgumentException("NaN and Infinity are not valid JSON numbers.");
                if (d == Math.Floor(d) && Math.Abs(d) < 9007199254740992.0)
                    b.Append(((long)d).ToString(CultureInfo.InvariantCulture));
                else if (value is float) // shortest float text: 0.1f is 0.1, not 0.10000000149011612
                    b.Append(((float)value).ToString("R", CultureInfo.InvariantCulture));
                else
                    b.Append(d.ToString("R", CultureInfo.InvariantCulture));
                return;
            }
            if (value is Enum) { WriteString(b, value.ToString()); return; }
            if (value is DateTime) { WriteString(b, ((DateTime)value).ToString("o", CultureInfo.InvariantCulture)); return; }
            if (value is DateTimeOffset)
            {
                WriteString(b, ((DateTimeOffset)value).ToString("o", CultureInfo.InvariantCulture));
                return;
            }
            if (value is Guid || value is TimeSpan || value is Uri)
            {
                WriteString(b, Convert.ToString(value, CultureInfo.InvariantCulture));
                return;
            }
            var dictionary = value as IDictionary;
            if (dictionary != null)
            {
                b.Append('{');
                bool first = true;
                foreach (DictionaryEntry entry in dictionary)
                {
                    if (!first) b.Append(',');
                    first = false;
                    WriteString(b, Convert.ToString(entry.Key, CultureInfo.InvariantCulture));
                    b.Append(':');
                    Write(b, entry.Value, depth + 1);
                }
                b.Append('}');
                return;
            }
            var enumerable = value as IEnumerable;
            if (enumerable != null)
            {
                b.Append('[');
                bool first = true;
                foreach (object item in enumerable)
                {
                    if (!first) b.Append(',');
                    first = false;
                    Write(b, item, depth + 1);
                }
                b.Append(']');
                return;
            }
            // Other objects: public properties and fields. Structs with public fields (Vector3, Color, Quaternion)
            // write only their fields: their computed properties (normalized, linear, ...) would never end.
            b.Append('{');
            bool firstMember = true;
            Type type = value.GetType();
            FieldInfo[] fields = type.GetFields(BindingFlags.Public | BindingFlags.Instance);
            PropertyInfo[] properties = type.IsValueType && fields.Length > 0
                ? new PropertyInfo[0]
                : type.GetProperties(BindingFlags.Public | BindingFlags.Instance);
            foreach (PropertyInfo property in properties)
            {
                if (!property.CanRead || property.GetIndexParameters().Length > 0) continue;
                object member;
                try
                {
                    member = property.GetValue(value, null);
                }
                catch (TargetInvocationException e)
                {
                    Exception cause = e.InnerException ?? e;
                    throw new ArgumentException("Reading " + type.Name + "." + property.Name + " failed: " +
                        cause.GetType().Name + ": " + cause.Message, cause);
                }
                if (!firstMember) b.Append(',');
                firstMember = false;
                WriteString(b, property.Name);
                b.Append(':');
                Write(b, member, depth + 1);
            }
            foreach (FieldInfo field in fields)
            {
                if (!firstMember) b.Append(',');
                firstMember = false;
                WriteString(b, field.Name);
                b.Append(':');
                Write(b, field.GetValue(value), depth + 1);
            }
            b.Append('}');
        }

        static void WriteString(StringBuilder b, string s)
        {
            b.Append('"');
            foreach (char c in s)
            {
                switch (c)
                {
                    case '"': b.Append("\\\""); break;
                    case '\\': b.Append("\\\\"); break;
                    case '\n': b.Append("\\n"); break;
                    case '\r': b.Append("\\r"); break;
                    case '\t': b.Append("\\t"); break;
                    case '\u2028': b.Append("\\u2028"); break;
                    case '\u2029': b.Append("\\u2029"); break;
                    default:
                        if (c < 0x20) b.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                        else b.Append(c);
                        break;
                }
            }
            b.Append('"');
        }

        sealed class Parser
        {
            readonly string text;
            public int Position;

            public Parser(string text) { this.text = text; }

            public FormatException Error(string what)
            {
                return new FormatException("Invalid JSON at character " + Position + ": " + what + ".");
            }

            public void SkipSpace()
            {
                while (Position < text.Length)
                {
                    char c = text[Position];
                    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
                    Position++;
                }
            }

            public object Value(int depth)
            {
                if (depth > MaxDepth) throw Error("nesting too deep");
                if (Position >= text.Length) throw Error("unexpected end");
                char c = text[Position];
                switch (c)
                {
                    case '{': return Object(depth);
                    case '[': return Array(depth);
                    case '"': return String();
                    case 't': Literal("true"); return true;
                    case 'f': Literal("false"); return false;
                    case 'n': Literal("null"); return null;
                    default:
                        if (c == '-' || (c >= '0' && c <= '9')) return Number();
                        throw Error("unexpected character '" + c + "'");
                }
            }

            void Literal(string word)
            {
                if (string.CompareOrdinal(text, Position, word, 0, word.Length) != 0) throw Error("expected " + word);
                Position += word.Length;
            }

            JsonObject Object(int depth)
            {
                var result = new JsonObject();
                Position++;
                SkipSpace();
                if (Position < text.Length && text[Position] == '}') { Position++; return result; }
                while (true)
                {
                    SkipSpace();
                    if (Position >= text.Length || text[Position] != '"') throw Error("expected a key");
                    string key = String();
                    SkipSpace();
                    if (Position >= text.Length || text[Position] != ':') throw Error("expected ':'");
                    Position++;
                    SkipSpace();
                    result[key] = Value(depth + 1);
                    SkipSpace();
                    if (Position < text.Length && text[Position] == ',') { Position++; continue; }
                    if (Position < text.Length && text[Position] == '}') { Position++; return result; }
                    throw Error("expected ',' or '}'");
                }
            }

            List<object> Array(int depth)
            {
                var result = new List<object>();
                Position++;
                SkipSpace();
                if (Position < text.Length && text[Position] == ']') { Position++; return result; }
                while (true)
                {
                    SkipSpace();
                    result.Add(Value(depth + 1));
                    SkipSpace();
                    if (Position < text.Length && text[Position] == ',') { Position++; continue; }
                    if (Position < text.Length && text[Position] == ']') { Position++; return result; }
                    throw Error("expected ',' or ']'");
                }
            }

            string String()
            {
                var b = new StringBuilder();
                Position++;
                while (true)
                {
                    if (Position >= text.Length) throw Error("unterminated string");
                    char c = text[Position++];
                    if (c == '"') return b.ToString();
                    if (c < 0x20) throw Error("control character in string");
                    if (c != '\\') { b.Append(c); continue; }
                    if (Position >= text.Length) throw Error("unterminated escape");
                    char e = text[Position++];
                    switch (e)
                    {
                        case '"': b.Append('"'); break;
                        case '\\': b.Append('\\'); break;
                        case '/': b.Append('/'); break;
                        case 'b': b.Append('\b'); break;
                        case 'f': b.Append('\f'); break;
                        case 'n': b.Append('\n'); break;
                        case 'r': b.Append('\r'); break;
                        case 't': b.Append('\t'); break;
                        case 'u':
                            if (Position + 4 > text.Length) throw Error("short \\u escape");
                            int code;
                            if (!int.TryParse(text.Substring(Position, 4), NumberStyles.HexNumber,
                                    CultureInfo.InvariantCulture, out code))
                                throw Error("bad \\u escape");
                            b.Append((char)code);
                            Position += 4;
                            break;
                        default: throw Error("bad escape");
                    }
                }
            }

            object Number()
            {
                int start = Position;
                bool integral = true;
                if (text[Position] == '-') Position++;
                if (Position >= text.Length || !char.IsDigit(text[Position])) throw Error("bad number");
                if (text[Position] == '0') Position++;
                else while (Position < text.Length && char.IsDigit(text[Position])) Position++;
                if (Position < text.Length && text[Position] == '.')
                {
                    integral = false;
                    Position++;
                    if (Position >= text.Length || !char.IsDigit(text[Position])) throw Error("bad number");
                    while (Position < text.Length && char.IsDigit(text[Position])) Position++;
                }
                if (Position < text.Length && (text[Position] == 'e' || text[Position] == 'E'))
                {
                    integral = false;
                    Position++;
                    if (Position < text.Length && (text[Position] == '+' || text[Position] == '-')) Position++;
                    if (Position >= text.Length || !char.IsDigit(text[Position])) throw Error("bad number");
                    while (Position < text.Length && char.IsDigit(text[Position])) Position++;
                }
                string token = text.Substring(start, Position - start);
                long whole;
                if (integral && long.TryParse(token, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out whole))
                    return whole;
                return double.Parse(token, NumberStyles.Float, CultureInfo.InvariantCulture);
            }
        }
    }

    // ------------------------------------------------------------------------------------------------
    // Errors, tools, dispatchers
    // ------------------------------------------------------------------------------------------------

    /// <summary>A JSON-RPC error: Code is the number (-32020), DataCode the stable string ("session_not_found").</summary>
    /// <summary>
    /// A tool handler threw (or its task faulted): the model got "Type: message" as an error output. Reported
    /// through the dispatcher (OamMainThreadQueue.OnError) with the handler's exception as InnerException. Return
    /// ToolReply.Error(...) for a failure the handler means, which is not reported.
    /// </summary>
    public sealed class OamToolException : Exception
    {
        /// <summary>The tool whose handler threw.</summary>
        public string ToolName { get; private set; }

        public OamToolException(string toolName, Exception inner)
            : base("Tool '" + toolName + "' threw " + inner.GetType().Name + "; the model got it as an error output.", inner)
        {
            ToolName = toolName;
        }
    }

    public sealed class OamBridgeException : Exception
    {
        public const int ShutDown = -32023;
        public const int Timeout = -32024;
        public const int Cancelled = -32009;

        public int Code { get; private set; }
        public string DataCode { get; private set; }
        public JsonObject ErrorData { get; private set; }

        public OamBridgeException(int code, string dataCode, string message, JsonObject data = null) : base(message)
        {
            Code = code;
            DataCode = dataCode;
            ErrorData = data ?? new JsonObject().With("code", dataCode);
        }

        public static OamBridgeException FromError(object error)
        {
            var e = error as JsonObject;
            if (e == null) return new OamBridgeException(-32603, "internal_error", "Malformed error response.");
            JsonObject data = e.GetObject("data") ?? new JsonObject();
            return new OamBridgeException((int)e.GetLong("code", -32603), data.GetString("code") ?? "",
                e.GetString("message") ?? "", data);
        }

        public override string ToString() { return Message + " (" + Code + " " + DataCode + ")"; }
    }

    /// <summary>What a tool handler returns: an output, or an error output the model sees as "Error: ...".</summary>
    public sealed class ToolReply
    {
        public object Output { get; private set; }
        public bool IsError { get; private set; }

        public static ToolReply Ok(object output) { return new ToolReply { Output = output }; }
        public static ToolReply Error(string message) { return new ToolReply { Output = message, IsError = true }; }
    }

    /// <summary>
    /// Details of one tool/call. The token is cancelled on the dispatcher (the main thread in Unity, so callbacks
    /// registered on it may touch game objects) when the bridge sends tool/cancel or its process exits.
    /// </summary>
    public sealed class ToolCallContext
    {
        public string Name { get; internal set; }
        public string CallId { get; internal set; }
        public object RequestId { get; internal set; }
        public string Session { get; internal set; }
        public string Npc { get; internal set; }
        /// <summary>The decision's position in DecideManyAsync's requests (decision/decideMany), else null.</summary>
        public long? Index { get; internal set; }
        public JsonObject Params { get; internal set; }
        public CancellationToken CancellationToken { get; internal set; }
    }

    /// <summary>Where callbacks and completions run.</summary>
    public interface IOamDispatcher
    {
        void Post(Action action);
    }

    /// <summary>Runs callbacks immediately on the bridge's reader thread (console apps, servers).</summary>
    public sealed class ImmediateDispatcher : IOamDispatcher
    {
        public void Post(Action action) { action(); }
    }

    /// <summary>Queues callbacks; Pump() runs them on the calling (main) thread. Call it from Update().</summary>
    public sealed class OamMainThreadQueue : IOamDispatcher
    {
        readonly Queue<Action> queue = new Queue<Action>();
        readonly object gate = new object();

        /// <summary>Receives exceptions thrown by callbacks (default: written to Console.Error).</summary>
        public Action<Exception> OnError = e => Console.Error.WriteLine("[open-apple-models] callback failed: " + e);

        public void Post(Action action) { lock (gate) queue.Enqueue(action); }

        /// <summary>Runs the callbacks queued so far, in order. Returns how many ran.</summary>
        public int Pump()
        {
            int ran = 0;
            while (true)
            {
                Action action;
                lock (gate)
                {
                    if (queue.Count == 0) return ran;
                    action = queue.Dequeue();
                }
                ran++;
                try { action(); }
                catch (Exception e) { OnError(e); }
            }
        }
    }

    // ------------------------------------------------------------------------------------------------
    // The bridge
    // ------------------------------------------------------------------------------------------------

    /// <summary>A running bridge process. Create, Start(), use, Dispose().</summary>
    public sealed class OamBridge : IDisposable
    {
        public const string Version = "0.1.0";

        sealed class Pending
        {
            public TaskCompletionSource<object> Completion;
            public Action<JsonObject> OnEvent;
            public Action<object> OnResult; // runs on the reader thread before any later line
            // The NPC or session whose work it is ("npc bram", "session s1"; null for other requests): its
            // CancelAsync silences it.
            public string Work;
            // Set when the caller gave up (token, timeout, CancelAsync, Dispose, the bridge gone) or a callback
            // threw: the events still queued for the dispatcher are dropped when it runs them.
            public volatile bool Silenced;
            public string Method;
            // How many cancels of a whole NPC's or session's work this client had noted when the request was sent:
            // a later one of its Work explains its -32009 (see EndWork).
            public long CancelsBefore;
        }

        sealed class Tool
        {
            public JsonObject Definition;
            public Func<JsonObject, ToolCallContext, Task<object>> Handler;
        }

        readonly string[] command;
        readonly IOamDispatcher dispatcher;
        readonly object gate = new object();
        readonly Dictionary<string, Pending> pending = new Dictionary<string, Pending>();
        // The requests of an NPC's or session's work until their task completes (on the dispatcher, after the events
        // queued before their response): CancelAsync silences them, also when their response has been read.
        readonly HashSet<Pending> working = new HashSet<Pending>();
        readonly Dictionary<string, Tool> tools = new Dictionary<string, Tool>();
        readonly Dictionary<string, CancellationTokenSource> toolCalls = new Dictionary<string, CancellationTokenSource>();
        readonly Dictionary<string, Action<JsonObject>> subscriptions = new Dictionary<string, Action<JsonObject>>();
        // Under gate: the cancels of a whole NPC's or session's work this client sent (DeleteAsync, RestoreAsync, an
        // npc/delete sent by hand), numbered, and per work ("npc gorm") the last one and why it was sent.
        long cancels;
        readonly Dictionary<string, KeyValuePair<long, string>> lastCancel = new Dictionary<string, KeyValuePair<long, string>>();
        Process process;
        Stream input;
        Thread reader;
        // Lines waiting for the writer thread, in the order they were sent; a null closes the bridge's input. Sending
        // only queues, so a bridge that stops reading (frozen, stopped in a debugger) with its input pipe full never
        // blocks the caller (the game's main thread); the lines wait here until it reads again or Dispose kills it.
        readonly Queue<byte[]> outbox = new Queue<byte[]>();
        bool outboxClosed; // under outbox: later lines are dropped
        long outboxBytes; // under outbox: bytes of the lines waiting (not the one being written)
        // Bytes that may wait for a bridge that does not read: past them a request fails with -32010 busy and a
        // notification throws it, instead of the game's memory growing without end. A line is always taken when
        // none waits, and answers to the bridge's tool/calls always go. Four of the longest lines the bridge reads
        // (MaxLineBytes: 64 MiB by default), so that a bridge started with a higher --max-line-bytes can be sent as
        // many of its longest lines as one with the default.
        internal long MaxQueuedBytes { get { return 4 * MaxLineBytes; } }
        Thread writer;
        long nextId;
        OamBridgeException dead;
        bool disposed;

        // How long Dispose waits for the bridge to exit after asking it to shut down, before killing it.
        internal int ShutdownGraceMs = 3000;
        // How long Dispose waits for the bridge's first line after asking it to shut down (it answers a ping at once,
        // even while cancelled work winds down); a bridge that writes nothing in that time is frozen and is killed.
        internal int ShutdownAnswerMs = 500;
        // Set by the reader when the bridge writes a line after Dispose began, or its output ends.
        readonly ManualResetEvent heardDuringShutdown = new ManualResetEvent(false);
        volatile bool shuttingDown;
        // The bridge's last stderr lines (under their own lock), for the error of a bridge that exits by itself: what
        // it said last ("Error: Unknown option '--bogus'. ...") tells the developer why, as the Godot client's does.
        readonly Queue<string> lastLogLines = new Queue<string>();
        const int ExitLogLines = 3;
        // Set when the bridge's stderr ends: its last lines are in before the exit is reported.
        readonly ManualResetEvent logEnded = new ManualResetEvent(false);

        /// <summary>Every notification (method, params), after the built-in routing.</summary>
        public event Action<string, JsonObject> NotificationReceived;

        /// <summary>
        /// Lines the bridge writes to stderr (its log), on the dispatcher. Default: Console.Error. Also the bridge's
        /// warnings on results the client reduces to one value, one line each, named by the call:
        /// "world.SubscribeAsync('quests.wolfs'): 'path' names 'quests.wolfs', which does not exist ... 'quests' has
        /// keys: wolves." (a misspelt path, whose subscription would never fire), "GenerateAsync: #/properties/stats:
        /// object without 'properties' is generated as {}; ...", "DecideManyAsync: Unknown parameter ... was ignored."
        /// (OamBridgeBehaviour: Debug.LogWarning). Sessions and NPCs keep theirs in Warnings, DecideAsync in its result.
        /// And a tool the model called that no handler is registered for ("The model called tool 'ring_bell' (NPC
        /// 'gorm'), but no handler is registered for it in this client: ..."; the model got an error output).
        /// <code>oam.LogReceived += line => Console.WriteLine("bridge: " + line);</code>
        /// </summary>
        public event Action<string> LogReceived;

        /// <summary>
        /// The bridge process ended by itself (crashed, killed, exited), also while no request waited, with the
        /// -32023 error every waiting and later request fails with ("The bridge process exited (signal 9) before
        /// answering."), which ends with the bridge's last stderr lines when it wrote any ("The bridge process exited
        /// (exit status 2) before answering. Its last lines on stderr:\nError: Unknown option '--bogus'. ...").
        /// On the dispatcher, once; not after Dispose. Start a new OamBridge to go on.
        /// </summary>
        public event Action<OamBridgeException> Exited;

        /// <param name="command">argv of the bridge (null: from the environment, see the file header).</param>
        /// <param name="dispatcher">where callbacks run (null: immediately on the reader thread).</param>
        public OamBridge(string[] command = null, IOamDispatcher dispatcher = null)
        {
            this.command = ResolveCommand(command);
            this.dispatcher = dispatcher ?? new ImmediateDispatcher();
            MaxLineBytes = MaxLineBytesOf(this.command);
        }

        /// <summary>The longest line the bridge reads by default, in bytes (`oam stdio --max-line-bytes`).</summary>
        public const long DefaultMaxLineBytes = 16L * 1024 * 1024;

        /// <summary>
        /// The longest message the bridge reads, in bytes: the --max-line-bytes in its command (16 MiB without one).
        /// A longer request, notification or tool result is not sent: the bridge would skip the line and answer it
        /// with id null, so the call would wait for ever. The request fails at once with OamBridgeException -32600
        /// invalid_message (ErrorData limit: this value), Notify throws it, and a tool's result becomes an error
        /// output the model gets. Set it for a bridge whose limit is not in its command (a wrapper script):
        /// <code>var oam = new OamBridge(new[] { "/games/bin/run-oam.sh" }) { MaxLineBytes = 64L * 1024 * 1024 };</code>
        /// </summary>
        public long MaxLineBytes { get; set; }

        /// <summary>The value of --max-line-bytes in a bridge's argv (as `oam stdio` reads it; the last one counts), else
        /// DefaultMaxLineBytes.</summary>
        public static long MaxLineBytesOf(string[] argv)
        {
            const string flag = "--max-line-bytes";
            long limit = DefaultMaxLineBytes;
            for (int i = 1; argv != null && i < argv.Length; i++)
            {
                string value = null;
                if (argv[i] == flag) value = i + 1 < argv.Length ? argv[i + 1] : null;
                else if (argv[i] != null && argv[i].StartsWith(flag + "=", StringComparison.Ordinal))
                    value = argv[i].Substring(flag.Length + 1);
                long parsed;
                if (value != null && long.TryParse(value, NumberStyles.None, CultureInfo.InvariantCulture, out parsed)
                    && parsed >= 1)
                    limit = parsed;
            }
            return limit;
        }

        /// <summary>The argv that will be started.</summary>
        public string[] Command { get { return (string[])command.Clone(); } }

        /// <summary>OS process id of the bridge (after Start; kept after it exits or Dispose).</summary>
        public int ProcessId { get; private set; }

        /// <summary>True once the bridge process has exited (and after Dispose).</summary>
        public bool HasExited
        {
            get
            {
                lock (gate) if (disposed) return true;
                try { return process != null && process.HasExited; }
                catch (InvalidOperationException) { return true; } // disposed meanwhile
            }
        }

        /// <summary>The result of initialize (set by InitializeAsync).</summary>
        public JsonObject ServerInfo { get; private set; }

        /// <summary>
        /// The variable the bridge is started with ("1") unless the game's environment has it: the bridge then stops
        /// when the process that started it exits (see the file header).
        /// </summary>
        public const string ExitWithParentVariable = "OAM_EXIT_WITH_PARENT";

        /// <summary>The argv from an explicit command or the environment.</summary>
        public static string[] ResolveCommand(string[] command)
        {
            if (command != null && command.Length > 0) return (string[])command.Clone();
            string fromEnv = Environment.GetEnvironmentVariable("OAM_BRIDGE_COMMAND");
            if (!string.IsNullOrEmpty(fromEnv) && fromEnv.Trim().Length > 0)
                return fromEnv.Split(new[] { ' ', '\t' }, StringSplitOptions.RemoveEmptyEntries);
            string path = Environment.GetEnvironmentVariable("OAM_BRIDGE_PATH");
            var argv = new List<string> { string.IsNullOrEmpty(path) ? "oam" : path, "stdio" };
            string log = Environment.GetEnvironmentVariable("OAM_BRIDGE_LOG");
            if (!string.IsNullOrEmpty(log)) { argv.Add("--log-level"); argv.Add(log); }
            return argv.ToArray();
        }

        /// <summary>
        /// Starts the process and its reader thread. Throws OamBridgeException (shut_down) if it cannot; later
        /// requests then fail with the same error. Throws ObjectDisposedException after Dispose.
        /// </summary>
        public void Start()
        {
            lock (gate)
            {
                if (disposed) throw new ObjectDisposedException("OamBridge", "The bridge was closed; create a new OamBridge.");
                if (dead != null) throw dead;
            }
            if (process != null) return;
            var info = new ProcessStartInfo
            {
                FileName = command[0],
                Arguments = JoinArguments(command, 1),
                UseShellExecute = false,
                RedirectStandardInput = true,
                RedirectStandardOutput = true,
                RedirectStandardError = true,
                StandardOutputEncoding = new UTF8Encoding(false),
                StandardErrorEncoding = new UTF8Encoding(false),
                CreateNoWindow = true,
            };
            // EnvironmentVariables starts as a copy of this process's environment.
            if (!info.EnvironmentVariables.ContainsKey(ExitWithParentVariable))
                info.EnvironmentVariables[ExitWithParentVariable] = "1";
            try
            {
                process = Process.Start(info);
            }
            catch (Exception e)
            {
                var error = new OamBridgeException(OamBridgeException.ShutDown, "shut_down",
                    "Cannot start the bridge '" + string.Join(" ", command) + "': " + WhyNotStarted(command[0], e));
                lock (gate) dead = error;
                throw error;
            }
            ProcessId = process.Id;
            input = process.StandardInput.BaseStream;
            process.ErrorDataReceived += (sender, e) =>
            {
                if (e.Data == null)
                {
                    logEnded.Set();
                    return;
                }
                var log = LogReceived;
                string line = e.Data;
                lock (lastLogLines)
                {
                    if (line.Trim().Length > 0) lastLogLines.Enqueue(line);
                    while (lastLogLines.Count > ExitLogLines) lastLogLines.Dequeue();
                }
                if (log != null) Post(() => log(line));
                else Console.Error.WriteLine(line);
            };
            process.BeginErrorReadLine();
            // Unity reloads the scripts' domain (scripts recompiled, entering play mode) without OnDestroy; the
            // process would run on for nobody, with its pipes held by the editor.
            AppDomain.CurrentDomain.DomainUnload += DisposeOnUnload;
            writer = new Thread(WriteLoop) { IsBackground = true, Name = "open-apple-models writer" };
            writer.Start();
            reader = new Thread(ReadLoop) { IsBackground = true, Name = "open-apple-models reader" };
            reader.Start();
        }

        // What the developer reads when the program cannot start: the missing file or the program not on PATH first
        // (an editor started from the Dock, Finder or Unity Hub does not get the PATH of a terminal), then where to
        // set the command, then the system's own words.
        static string WhyNotStarted(string program, Exception e)
        {
            string why;
            bool hasFolder = program.IndexOf('/') >= 0 || program.IndexOf('\\') >= 0;
            if (hasFolder && Directory.Exists(program))
                why = "'" + program + "' is a folder, not the bridge's executable.";
            else if (hasFolder && !File.Exists(program))
                why = "there is no file '" + program + "'" + (Path.IsPathRooted(program) ? "" :
                    " (a relative path starts from the working directory, " + Directory.GetCurrentDirectory() + ")") + ".";
            else if (!hasFolder && FindOnPath(program) == null)
                why = "'" + program + "' is not on the PATH of this process. A Unity editor or game started from the Dock, "
                    + "Finder or Unity Hub does not get the PATH of your terminal: use its full path (`which " + program
                    + "` in a terminal shows it), or install it.";
            else
                why = "it could not be run.";
            return why + " Give the bridge's command to the OamBridge constructor (OamBridgeBehaviour: its Bridge Path "
                + "field, the compiled oam that `deno task compile` makes), or set OAM_BRIDGE_PATH (the compiled oam) or "
                + "OAM_BRIDGE_COMMAND (`/full/path/to/deno run -A /path/to/open-apple-models/cli.ts stdio`). ("
                + e.GetType().Name + ": " + e.Message + ")";
        }

        // The file a bare program name runs from PATH (also with .exe on Windows), or null.
        static string FindOnPath(string program)
        {
            string path = Environment.GetEnvironmentVariable("PATH") ?? "";
            foreach (string folder in path.Split(Path.PathSeparator))
            {
                if (folder.Length == 0) continue;
                try
                {
                    string candidate = Path.Combine(folder, program);
                    if (File.Exists(candidate)) return candidate;
                    if (File.Exists(candidate + ".exe")) return candidate + ".exe";
                }
                catch (ArgumentException) { } // a folder with characters the platform does not allow
            }
            return null;
        }

        /// <summary>Sends initialize; the result is also kept in ServerInfo.</summary>
        public async Task<JsonObject> InitializeAsync(string clientName = "unity")
        {
            var result = await RequestAsync("initialize", new JsonObject()
                .With("client", new JsonObject().With("name", clientName).With("version", Version))
                .With("protocolVersion", "1.0")).ConfigureAwait(false);
            ServerInfo = result as JsonObject;
            return ServerInfo;
        }

        static string JoinArguments(string[] argv, int from)
        {
            var b = new StringBuilder();
            for (int i = from; i < argv.Length; i++)
            {
                if (b.Length > 0) b.Append(' ');
                b.Append(QuoteArgument(argv[i]));
            }
            return b.ToString();
        }

        // Quoting that CommandLineToArgvW (and Mono's parser) reads back as the same argument.
        static string QuoteArgument(string argument)
        {
            if (argument.Length > 0 && argument.IndexOfAny(new[] { ' ', '\t', '"', '\n' }) < 0) return argument;
            var b = new StringBuilder("\"");
            int backslashes = 0;
            foreach (char c in argument)
            {
                if (c == '\\') { backslashes++; continue; }
                if (c == '"') { b.Append('\\', backslashes * 2 + 1); b.Append('"'); }
                else { b.Append('\\', backslashes); b.Append(c); }
                backslashes = 0;
            }
            b.Append('\\', backslashes * 2);
            b.Append('"');
            return b.ToString();
        }

        // ---------------------------------------------------------------------------------------- protocol

        /// <summary>
        /// Sends a request and completes with its result (JsonObject, or another JSON value). Errors complete the
        /// task with OamBridgeException. onEvent receives the event of each "&lt;ns&gt;/event" notification the
        /// request causes. With timeoutMs &gt; 0 it fails with a -32024 timeout error and drops the late response.
        /// Cancelling the token abandons the request (OperationCanceledException) after running onCancel
        /// (used to send session/cancel or npc/cancel; the timeout runs it too): the -32009 of the other requests of
        /// the NPC or session the params name, sent before, then says so ("... when the CancellationToken of its
        /// 'npc/talk' was cancelled: ...", "... when its 'npc/talk' timed out after 1500 ms (timeoutMs): ..."). Once the token is cancelled, the timeout passed or the bridge
        /// is closed, onEvent gets no more events, not even those already queued for the dispatcher (a request that
        /// had already been answered still gives its result); after onEvent throws, it gets no more events either
        /// (the exception goes to the dispatcher's error handler once, and the request goes on). An npc/cancel,
        /// npc/delete, session/cancel or session/delete sent here does what CancelAsync and DeleteAsync do: from the
        /// call on, the running turn of the NPC or session it names gets no more events, and after a delete its
        /// -32009 says why ("... when an 'npc/delete' request deleted the NPC.").
        /// </summary>
        public Task<object> RequestAsync(string method, object parameters = null, Action<JsonObject> onEvent = null,
            CancellationToken cancellationToken = default(CancellationToken), int timeoutMs = 0, Action onCancel = null)
        {
            return RequestCore(method, parameters, onEvent, null, cancellationToken, timeoutMs, onCancel);
        }

        Task<object> RequestCore(string method, object parameters, Action<JsonObject> onEvent, Action<object> onResult,
            CancellationToken cancellationToken, int timeoutMs, Action onCancel, string why = null)
        {
            lock (gate)
            {
                if (dead != null) return FailedTask(dead);
                if (process == null) throw new InvalidOperationException("Call Start() first.");
            }
            if (cancellationToken.IsCancellationRequested)
            {
                var cancelled = new TaskCompletionSource<object>();
                cancelled.SetCanceled();
                return cancelled.Task;
            }
            string id;
            var entry = new Pending
            {
                Completion = new TaskCompletionSource<object>(TaskCreationOptions.RunContinuationsAsynchronously),
                OnEvent = onEvent,
                OnResult = onResult,
                Work = WorkOf(method, parameters),
                Method = method,
            };
            var message = new JsonObject().With("jsonrpc", "2.0");
            lock (gate)
            {
                if (dead != null) return FailedTask(dead);
                id = "cs-" + (++nextId);
                message.With("id", id).With("method", method);
                if (parameters != null) message.With("params", parameters);
            }
            string line = Json.Serialize(message); // bad parameters throw here, before anything is sent
            OamBridgeException tooLong = TooLong(line, method);
            if (tooLong != null) return FailedTask(tooLong);
            lock (gate)
            {
                if (dead != null) return FailedTask(dead); // closed meanwhile
                pending[id] = entry;
                if (entry.Work != null) working.Add(entry);
                entry.CancelsBefore = cancels;
            }
            // CancelAsync, DeleteAsync and RestoreAsync send theirs here (with their why), as does the game by hand.
            string endingWhy;
            if (entry.Work != null && EndingMethods.TryGetValue(method, out endingWhy))
                EndWork(entry.Work, why ?? endingWhy);
            if (entry.Work != null)
                entry.Completion.Task.ContinueWith(_ => { lock (gate) working.Remove(entry); }, CancellationToken.None,
                    TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            if (!WriteLine(line, true))
            {
                Forget(id);
                return FailedTask(QueueFull(method));
            }
            if (cancellationToken.CanBeCanceled)
            {
                var registration = cancellationToken.Register(() =>
                {
                    entry.Silenced = true; // no more lines for a player who walked away, also when the turn had ended
                    if (!Forget(id)) return;
                    GiveUp(entry, onCancel, "the CancellationToken of its '" + method + "' was cancelled");
                    dispatcher.Post(() => entry.Completion.TrySetCanceled());
                });
                // A long-lived token (destroyCancellationToken) must not keep finished requests and their callbacks.
                entry.Completion.Task.ContinueWith(_ => registration.Dispose(), CancellationToken.None,
                    TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            }
            if (timeoutMs > 0)
            {
                var timer = new Timer(_ =>
                {
                    if (!Forget(id)) return;
                    entry.Silenced = true;
                    GiveUp(entry, onCancel, "its '" + method + "' timed out after " + timeoutMs + " ms (timeoutMs)");
                    var error = new OamBridgeException(OamBridgeException.Timeout, "timeout",
                        "'" + method + "' did not finish within " + timeoutMs + " ms; it was cancelled.");
                    dispatcher.Post(() => entry.Completion.TrySetException(error));
                }, null, timeoutMs, Timeout.Infinite);
                entry.Completion.Task.ContinueWith(_ => timer.Dispose(), TaskScheduler.Default);
            }
            return entry.Completion.Task;
        }

        // Posts a callback from a bridge thread. With the ImmediateDispatcher it runs here: a throwing user callback
        // must not end the reader thread or the process (OamMainThreadQueue hands such errors to OnError).
        void Post(Action action)
        {
            try { dispatcher.Post(action); }
            catch (Exception e) { Console.Error.WriteLine("[open-apple-models] callback failed: " + e); }
        }

        // "npc <id>" for an npc/* request that names its NPC, "session <id>" for a session/* one, else null. The
        // params may be a JsonObject or another dictionary, or an object with a public npc/session property or field
        // (an anonymous new { npc = "gorm", line = "Hi" }, as RequestAsync sends it), the id a string or a handle.
        static string WorkOf(string method, object parameters)
        {
            if (parameters == null) return null;
            foreach (string kind in new[] { "npc", "session" })
            {
                if (!method.StartsWith(kind + "/", StringComparison.Ordinal)) continue;
                string id = IdOf(MemberOf(parameters, kind));
                if (id != null) return kind + " " + id;
            }
            return null;
        }

        // The value of params' key, read as Write would send it (null when there is none or it cannot be read).
        static object MemberOf(object parameters, string key)
        {
            var dictionary = parameters as IDictionary;
            if (dictionary != null) return dictionary.Contains(key) ? dictionary[key] : null;
            try
            {
                Type type = parameters.GetType();
                FieldInfo field = type.GetField(key, BindingFlags.Public | BindingFlags.Instance);
                if (field != null) return field.GetValue(parameters);
                PropertyInfo property = type.GetProperty(key, BindingFlags.Public | BindingFlags.Instance);
                if (property == null || !property.CanRead || property.GetIndexParameters().Length > 0) return null;
                return property.GetValue(parameters, null);
            }
            catch (AmbiguousMatchException) { return null; } // a member hidden with `new`: not told apart here
            catch (TargetInvocationException) { return null; } // Write reports it when the request is written
        }

        static string IdOf(object value)
        {
            if (value is OamNpc) return ((OamNpc)value).Id;
            if (value is OamSession) return ((OamSession)value).Id;
            return value as string;
        }

        // The requests that cancel all the work of the NPC or session they name, and why its other requests in
        // flight were cancelled when one is sent by hand (null: a cancel, whose -32009 is the one the game asked for).
        static readonly Dictionary<string, string> EndingMethods = new Dictionary<string, string>
        {
            { "npc/cancel", null },
            { "session/cancel", null },
            { "npc/delete", "an 'npc/delete' request deleted the NPC." },
            { "session/delete", "a 'session/delete' request deleted the session." },
        };

        // The same sent as a notification with Notify (no answer comes, but the work ends all the same).
        static readonly Dictionary<string, string> EndingNotifications = new Dictionary<string, string>
        {
            { "npc/cancel", null },
            { "session/cancel", null },
            { "npc/delete", "an 'npc/delete' notification deleted the NPC." },
            { "session/delete", "a 'session/delete' notification deleted the session." },
        };

        // From now on, no callback of the requests in flight for this NPC's or session's work ("npc gorm") gets an
        // event, also those already queued for the dispatcher: its cancel or delete is about to go (the player
        // walked away, the NPC died, a save is being loaded over it). The requests still complete (a turn that had
        // already ended gives its reply). With a why, the -32009 of those sent before ends with "when " + why.
        void EndWork(string work, string why)
        {
            lock (gate)
            {
                foreach (var entry in working)
                    if (entry.Work == work) entry.Silenced = true;
            }
            if (why != null) NoteCancel(work, why);
        }

        // A request given up here (its token cancelled, its timeoutMs passed) whose onCancel then sends the cancel of
        // its NPC's or session's whole work (TalkAsync, RespondAsync, CompactAsync send npc/cancel or session/cancel):
        // the -32009 of that work's other requests sent before (a talk queued behind it, a tool handler's StateAsync
        // of its own NPC) says how, as the other clients' do. how: "its 'npc/talk' timed out after 1500 ms ...".
        void GiveUp(Pending entry, Action onCancel, string how)
        {
            if (onCancel == null) return;
            if (entry.Work != null)
                NoteCancel(entry.Work, how + ": the protocol cancels the running turn and every request queued behind "
                    + "it together (there is no cancel for one request). Send it again if you still need it.");
            try { onCancel(); } catch (Exception) { }
        }

        // Notes, before it is sent, a cancel of all of an NPC's or session's work ("npc gorm") for a reason the -32009
        // of its requests sent before does not show: their error then ends with "when " + why (see Explained).
        void NoteCancel(string work, string why)
        {
            lock (gate)
            {
                lastCancel[work] = new KeyValuePair<long, string>(++cancels, why);
                if (lastCancel.Count <= 256) return;
                // A game that deletes NPC after NPC: what no request in flight was sent before is of no more use.
                long oldest = cancels;
                foreach (var entry in pending.Values) oldest = Math.Min(oldest, entry.CancelsBefore);
                foreach (var key in new List<string>(lastCancel.Keys))
                    if (lastCancel[key].Key <= oldest) lastCancel.Remove(key);
            }
        }

        // A -32009 that a cancel of this client caused after the request was sent (the protocol cancels an NPC's or
        // session's queued work with its running turn) says so, as the other clients' do.
        OamBridgeException Explained(OamBridgeException error, Pending entry)
        {
            if (error.Code != OamBridgeException.Cancelled || entry.Work == null) return error;
            KeyValuePair<long, string> noted;
            lock (gate)
                if (!lastCancel.TryGetValue(entry.Work, out noted) || noted.Key <= entry.CancelsBefore) return error;
            int space = entry.Work.IndexOf(' ');
            string words = (entry.Work.StartsWith("npc ", StringComparison.Ordinal) ? "NPC '" : "session '")
                + entry.Work.Substring(space + 1) + "'";
            return new OamBridgeException(error.Code, error.DataCode, error.Message + " '" + entry.Method
                + "' was cancelled with the rest of " + words + "'s work when " + noted.Value, error.ErrorData);
        }

        bool Forget(string id)
        {
            lock (gate) return pending.Remove(id);
        }

        static Task<object> FailedTask(Exception error)
        {
            var completion = new TaskCompletionSource<object>();
            completion.SetException(error);
            return completion.Task;
        }

        /// <summary>
        /// Sends a notification (no response). Like a request, it only queues the line; when the bridge has not read
        /// the lines sent before (frozen, stopped in a debugger) and they hold four times MaxLineBytes (64 MiB by
        /// default), it is not sent and throws OamBridgeException -32010 busy. One longer than the bridge reads
        /// (MaxLineBytes) is not sent and throws -32600 invalid_message. An npc/cancel, npc/delete, session/cancel or
        /// session/delete sent here ends the work it names as RequestAsync does: from the call on, the running turn
        /// of that NPC or session gets no more events, and after a delete its -32009 says why ("... when an
        /// 'npc/delete' notification deleted the NPC.").
        /// </summary>
        public void Notify(string method, object parameters = null)
        {
            var message = new JsonObject().With("jsonrpc", "2.0").With("method", method);
            if (parameters != null) message.With("params", parameters);
            string line = Json.Serialize(message);
            OamBridgeException tooLong = TooLong(line, method);
            if (tooLong != null) throw tooLong;
            string work = WorkOf(method, parameters), endingWhy;
            if (work != null && EndingNotifications.TryGetValue(method, out endingWhy)) EndWork(work, endingWhy);
            if (!WriteLine(line, true)) throw QueueFull(method);
        }

        static readonly UTF8Encoding Utf8 = new UTF8Encoding(false);

        // The -32600 error of a line longer than the bridge reads (as the C client words it), else null. A world's
        // state (most often a saved one being loaded) is told how to send it in parts, as the other clients do.
        OamBridgeException TooLong(string line, string method)
        {
            long limit = MaxLineBytes;
            if (line.Length <= limit / 3) return null; // no character takes more than 3 bytes in UTF-8
            long bytes = Utf8.GetByteCount(line);
            if (bytes <= limit) return null;
            bool worldWrite = method == "world/create" || method == "world/set" || method == "world/merge";
            return new OamBridgeException(-32600, "invalid_message", "The message is " + bytes
                + " bytes, longer than the " + limit + " bytes the bridge reads; it was not sent." + (worldWrite
                    ? " A world's state this large loads in parts: world/create with part of it, then world/merge the "
                      + "rest, a few keys at a time (docs/PROTOCOL.md \u00a76, 'Saving a world')."
                    : ""),
                new JsonObject().With("code", "invalid_message").With("limit", limit));
        }

        // A cancel the library sends for a request it gave up on: never refused (there are no more than requests).
        internal void NotifyCancel(string method, JsonObject parameters)
        {
            WriteLine(Json.Serialize(new JsonObject().With("jsonrpc", "2.0").With("method", method)
                .With("params", parameters)));
        }

        OamBridgeException QueueFull(string method)
        {
            return new OamBridgeException(-32010, "busy", "The bridge is not reading its input (frozen or stopped?): "
                + MaxQueuedBytes + " bytes sent before wait to be written to it; '" + method + "' was not sent.",
                new JsonObject().With("code", "busy").With("limit", MaxQueuedBytes));
        }

        // Queues a line for the writer thread; never blocks on the bridge. With limited, a line that would take the
        // waiting lines past MaxQueuedBytes is refused (false); answers to the bridge and the library's own lines
        // are not limited.
        bool WriteLine(string line, bool limited = false)
        {
            byte[] bytes = Utf8.GetBytes(line + "\n");
            lock (outbox)
            {
                if (outboxClosed) return true; // shut down or gone: the reader or Dispose fails the waiting requests
                if (limited && outbox.Count > 0 && outboxBytes + bytes.Length > MaxQueuedBytes) return false;
                outbox.Enqueue(bytes);
                outboxBytes += bytes.Length;
                Monitor.Pulse(outbox);
            }
            return true;
        }

        // The writer closes the bridge's input after the lines queued before this.
        void CloseInput()
        {
            lock (outbox)
            {
                if (outboxClosed) return;
                outboxClosed = true;
                outbox.Enqueue(null);
                Monitor.Pulse(outbox);
            }
        }

        void WriteLoop()
        {
            bool broken = false;
            while (true)
            {
                byte[] bytes;
                lock (outbox)
                {
                    while (outbox.Count == 0) Monitor.Wait(outbox);
                    bytes = outbox.Dequeue();
                    if (bytes != null) outboxBytes -= bytes.Length;
                }
                if (bytes == null) break;
                if (broken) continue;
                try
                {
                    input.Write(bytes, 0, bytes.Length); // blocks while the bridge does not read: only this thread
                    input.Flush();
                }
                catch (Exception)
                {
                    broken = true; // the process is gone: the reader reports it to every waiting request
                }
            }
            try { input.Close(); } catch (Exception) { }
        }

        void ReadLoop()
        {
            StreamReader output = process.StandardOutput;
            try
            {
                string line;
                while ((line = output.ReadLine()) != null)
                {
                    if (shuttingDown) heardDuringShutdown.Set();
                    if (line.Length == 0) continue;
                    try { Dispatch(line); }
                    catch (Exception e) { Console.Error.WriteLine("[open-apple-models] " + e); }
                }
            }
            catch (Exception)
            {
                // stream closed
            }
            heardDuringShutdown.Set();
            CloseInput(); // ends the writer thread
            string description = "output closed";
            try
            {
                if (process.WaitForExit(2000)) description = DescribeExit(process.ExitCode);
            }
            catch (Exception) { }
            // Its stderr ends with it, unless a process it started holds it open: not waited for long then (nor at
            // all after Dispose, whose error is "The bridge was closed.").
            bool closed;
            lock (gate) closed = dead != null;
            if (!closed) logEnded.WaitOne(1000);
            string tail;
            lock (lastLogLines) tail = string.Join("\n", lastLogLines.ToArray());
            OamBridgeException error;
            Outstanding outstanding;
            bool byItself;
            lock (gate)
            {
                byItself = dead == null; // not Dispose
                error = dead ?? new OamBridgeException(OamBridgeException.ShutDown, "shut_down",
                    "The bridge process exited (" + description + ") before answering."
                    + (tail.Length > 0 ? " Its last lines on stderr:\n" + tail : ""));
                dead = error;
                outstanding = TakeOutstandingLocked();
            }
            FailOutstanding(outstanding, error);
            var exited = Exited;
            if (byItself && exited != null) Post(() => exited(error));
        }

        // Mono and .NET report a process ended by a signal as exit status 128 + the signal on Unix; it is named as
        // the C and Python clients name it ("signal 9" for a kill).
        static string DescribeExit(int code)
        {
            bool unix = Environment.OSVersion.Platform == PlatformID.Unix || Environment.OSVersion.Platform == PlatformID.MacOSX;
            if (unix && code > 128 && code < 128 + 65) return "signal " + (code - 128);
            return "exit status " + code;
        }

        // Every waiting request and running tool call, taken out under gate in the same lock that sets `dead`, so
        // nothing is added after them.
        struct Outstanding
        {
            public List<Pending> Waiting;
            public List<CancellationTokenSource> ToolCalls;
        }

        Outstanding TakeOutstandingLocked()
        {
            var outstanding = new Outstanding
            {
                Waiting = new List<Pending>(pending.Values),
                ToolCalls = new List<CancellationTokenSource>(toolCalls.Values),
            };
            foreach (var entry in outstanding.Waiting) entry.Silenced = true;
            pending.Clear();
            toolCalls.Clear();
            return outstanding;
        }

        // Cancels the tool calls (their handlers see the token) and fails the requests through the dispatcher.
        void FailOutstanding(Outstanding outstanding, Exception error)
        {
            foreach (var call in outstanding.ToolCalls) Post(call.Cancel);
            foreach (var entry in outstanding.Waiting)
            {
                var completion = entry.Completion;
                dispatcher.Post(() => completion.TrySetException(error));
            }
        }

        void Dispatch(string line)
        {
            var message = Json.Parse(line) as JsonObject;
            if (message == null) return;
            string method = message.GetString("method");
            JsonObject parameters = message.GetObject("params") ?? new JsonObject();
            if (method != null)
            {
                if (message.ContainsKey("id")) HandleBridgeRequest(message["id"], method, parameters);
                else HandleNotification(method, parameters);
                return;
            }
            if (!message.ContainsKey("id")) return;
            string key = IdKey(message["id"]);
            Pending entry;
            lock (gate)
            {
                if (!pending.TryGetValue(key, out entry)) return; // late response (timed out or cancelled): dropped
                pending.Remove(key);
            }
            if (message.ContainsKey("error"))
            {
                var error = Explained(OamBridgeException.FromError(message["error"]), entry);
                dispatcher.Post(() => entry.Completion.TrySetException(error));
            }
            else
            {
                object result = message.Get("result");
                if (entry.OnResult != null) entry.OnResult(result);
                dispatcher.Post(() => entry.Completion.TrySetResult(result));
            }
        }

        // Checked when the callback runs, not when the line arrives: events already queued when the token is
        // cancelled (in an earlier callback of the same frame, say) are not delivered. A callback that throws gets no
        // more events of that request (one report to the dispatcher's error handler, not one per lineDelta); the
        // request itself goes on.
        static void DeliverEvent(Pending entry, JsonObject evt)
        {
            if (entry.Silenced) return;
            try
            {
                entry.OnEvent(evt);
            }
            catch (Exception)
            {
                entry.Silenced = true;
                throw;
            }
        }

        static string IdKey(object id)
        {
            if (id is string) return (string)id;
            return Json.Serialize(id);
        }

        void HandleNotification(string method, JsonObject parameters)
        {
            if (method == "tool/cancel")
            {
                CancellationTokenSource call;
                lock (gate)
                {
                    string key = IdKey(parameters.Get("id"));
                    if (toolCalls.TryGetValue(key, out call)) toolCalls.Remove(key);
                }
                if (call != null) Post(call.Cancel); // token callbacks run where the handler ran
            }
            else if (method == "world/changed")
            {
                // Looked up when the callback runs, not when the line arrives: a change already on its way when
                // the game unsubscribes (from an earlier change's callback, say) is not delivered.
                string id = parameters.GetString("subscription") ?? "";
                Post(() =>
                {
                    Action<JsonObject> callback;
                    lock (gate) subscriptions.TryGetValue(id, out callback);
                    if (callback != null) callback(parameters);
                });
            }
            else if (method.EndsWith("/event", StringComparison.Ordinal) && parameters.ContainsKey("requestId"))
            {
                Pending entry;
                lock (gate) pending.TryGetValue(IdKey(parameters["requestId"]), out entry);
                var evt = parameters.GetObject("event");
                if (entry != null && entry.OnEvent != null && evt != null) Post(() => DeliverEvent(entry, evt));
            }
            // Each listener on its own: one that throws is reported (OamMainThreadQueue.OnError, or Console.Error
            // with the ImmediateDispatcher) and the others still get the line, as does every later line.
            var listeners = NotificationReceived;
            if (listeners == null) return;
            foreach (Action<string, JsonObject> listener in listeners.GetInvocationList())
                Post(() => listener(method, parameters));
        }

        // ---------------------------------------------------------------------------------------- tools

        /// <summary>
        /// Registers every tool registered on another bridge (a crashed one being replaced) with the same definition
        /// and handler; tools registered here under the same name are replaced.
        /// </summary>
        public void RegisterToolsFrom(OamBridge other)
        {
            if (other == null || other == this) return;
            List<KeyValuePair<string, Tool>> copied;
            lock (other.gate) copied = new List<KeyValuePair<string, Tool>>(other.tools);
            lock (gate) foreach (var entry in copied) tools[entry.Key] = entry.Value;
        }

        /// <summary>
        /// Registers a client tool. The handler runs on the dispatcher (the main thread in Unity) and returns the
        /// output (text or JSON data) or a ToolReply; throwing, or returning a value Json.Serialize rejects (NaN),
        /// returns an error output the model sees. Do not block in it: return a Task for actions that take frames.
        /// The context's token is cancelled when the bridge gives up on the call (tool timeout, default 120 s, or
        /// timeoutSeconds; cancelled turn); a handler that never finishes is then simply forgotten.
        /// </summary>
        public void RegisterTool(string name, string description, object parameters,
            Func<JsonObject, ToolCallContext, Task<object>> handler, double? timeoutSeconds = null)
        {
            var definition = new JsonObject().With("name", name);
            if (!string.IsNullOrEmpty(description)) definition.With("description", description);
            definition.With("parameters", parameters ?? new JsonObject().With("type", "object")
                .With("properties", new JsonObject()));
            if (timeoutSeconds.HasValue) definition.With("timeoutSeconds", timeoutSeconds.Value);
            lock (gate) tools[name] = new Tool { Definition = definition, Handler = handler };
        }

        /// <summary>
        /// Registers a client tool whose handler takes only the arguments. It may return a Task (args =&gt;
        /// OpenGateAsync(args)): the output is the Task's result once it finishes (null for a plain Task).
        /// </summary>
        public void RegisterTool(string name, string description, object parameters, Func<JsonObject, object> handler,
            double? timeoutSeconds = null)
        {
            RegisterTool(name, description, parameters,
                (args, context) => Task.FromResult(handler(args)), timeoutSeconds);
        }

        /// <summary>Definitions of registered tools by name (null: all), for session/create, npc/create, ...</summary>
        public List<object> ToolDefinitions(IEnumerable<string> names = null)
        {
            var result = new List<object>();
            lock (gate)
            {
                if (names == null)
                {
                    foreach (var tool in tools.Values) result.Add(tool.Definition);
                    return result;
                }
                foreach (string name in names)
                {
                    Tool tool;
                    if (!tools.TryGetValue(name, out tool))
                        throw new ArgumentException("No tool named '" + name + "' is registered (use RegisterTool).");
                    result.Add(tool.Definition);
                }
            }
            return result;
        }

        void HandleBridgeRequest(object id, string method, JsonObject parameters)
        {
            if (method != "tool/call")
            {
                Reply(id, null, new JsonObject().With("code", -32601).With("message", "Unknown method '" + method + "'."));
                return;
            }
            JsonObject call = parameters.GetObject("call") ?? new JsonObject();
            string name = call.GetString("name") ?? "";
            Tool tool;
            lock (gate) tools.TryGetValue(name, out tool);
            if (tool == null)
            {
                // The model gets an error output; the game hears of it too (a restored save or a resumed history
                // keeps its tools' definitions, not their handlers).
                string from = parameters.GetString("session") != null ? "session '" + parameters.GetString("session") + "'"
                    : parameters.GetString("npc") != null ? "NPC '" + parameters.GetString("npc") + "'"
                    : "a decision or generation";
                Log("The model called tool '" + name + "' (" + from + "), but no handler is registered for it in this "
                    + "client: it got an error output. Register it with RegisterTool before the turn (a save restored "
                    + "with RestoreNpcAsync, or a session resumed from history, keeps the tool's definition, not its "
                    + "handler).");
                Reply(id, null, new JsonObject().With("code", -32601)
                    .With("message", "No handler for tool '" + name + "' in this client."));
                return;
            }
            var cancellation = new CancellationTokenSource();
            lock (gate) toolCalls[IdKey(id)] = cancellation;
            var context = new ToolCallContext
            {
                Name = name,
                CallId = call.GetString("id"),
                RequestId = parameters.Get("requestId"),
                Session = parameters.GetString("session"),
                Npc = parameters.GetString("npc"),
                Index = parameters.Get("index") is long ? (long?)(long)parameters.Get("index") : null,
                Params = parameters,
                CancellationToken = cancellation.Token,
            };
            JsonObject arguments = call.GetObject("arguments") ?? new JsonObject();
            dispatcher.Post(() => RunTool(id, tool, arguments, context, cancellation));
        }

        void RunTool(object id, Tool tool, JsonObject arguments, ToolCallContext context, CancellationTokenSource cancellation)
        {
            // A call queued before the bridge was closed or ended (a scene unloaded before the next frame): nobody
            // can read its answer, and the handler would act on a game that is going away.
            lock (gate) if (dead != null) return;
            Task<object> task;
            try
            {
                task = tool.Handler(arguments, context) ?? Task.FromResult<object>(null);
            }
            catch (Exception e)
            {
                ReportToolException(context.Name, e, cancellation);
                FinishTool(id, null, e, cancellation);
                return;
            }
            FinishWhenDone(id, task, context, cancellation);
        }

        // A handler's value may itself be a Task (a one-argument handler written args => OpenGateAsync(args) binds to
        // the synchronous overload): the output is what that Task gives, once it has finished. Serializing the Task
        // would give the model its Status and Id, and read its Result on a waiting thread.
        // The output is serialized on the dispatcher (the main thread in Unity), where the handler ran: a lazy query
        // (enemies.Select(e => e.name)) or a property of a returned object may read Unity objects, which throw on
        // other threads. A handler that finished at once is answered at once; a later one on the next Pump.
        void FinishWhenDone(object id, Task task, ToolCallContext context, CancellationTokenSource cancellation)
        {
            if (task.IsCompleted) { Finished(id, task, context, cancellation); return; }
            task.ContinueWith(t => Post(() => Finished(id, t, context, cancellation)), TaskScheduler.Default);
        }

        void Finished(object id, Task t, ToolCallContext context, CancellationTokenSource cancellation)
        {
            if (t.IsCanceled) FinishTool(id, null, new OperationCanceledException(), cancellation);
            else if (t.IsFaulted)
            {
                var e = t.Exception.InnerException ?? t.Exception;
                ReportToolException(context.Name, e, cancellation);
                FinishTool(id, null, e, cancellation);
            }
            else
            {
                object value = TaskResult(t);
                var inner = value as Task;
                if (inner != null) FinishWhenDone(id, inner, context, cancellation);
                else FinishTool(id, value, null, cancellation);
            }
        }

        // The result of a finished Task<T>; null for a plain Task (an async method's Task is a Task<VoidTaskResult>).
        static object TaskResult(Task task)
        {
            for (var type = task.GetType(); type != null && type != typeof(Task); type = type.BaseType)
            {
                if (!type.IsGenericType || type.GetGenericTypeDefinition() != typeof(Task<>)) continue;
                if (type.GetGenericArguments()[0].FullName == "System.Threading.Tasks.VoidTaskResult") return null;
                return type.GetProperty("Result").GetValue(task, null);
            }
            return null;
        }

        // The model gets one line ("NullReferenceException: …"); the developer gets the exception with its stack, as
        // an OamToolException through the dispatcher: OamMainThreadQueue.OnError (Debug.LogException in
        // OamBridgeBehaviour), Console.Error with the ImmediateDispatcher. ToolReply.Error is an answer, not reported;
        // neither is the cancellation of a call the bridge stopped waiting for.
        void ReportToolException(string name, Exception error, CancellationTokenSource cancellation)
        {
            if (error is OperationCanceledException && cancellation.IsCancellationRequested) return;
            var report = new OamToolException(name, error);
            Post(() => { throw report; });
        }

        void FinishTool(object id, object value, Exception error, CancellationTokenSource cancellation)
        {
            lock (gate) toolCalls.Remove(IdKey(id));
            if (cancellation.IsCancellationRequested) return; // tool/cancel: the bridge ignores any answer
            var result = new JsonObject();
            if (error != null)
            {
                result.With("output", error is OperationCanceledException ? "The tool was cancelled." :
                    error.GetType().Name + ": " + error.Message).With("isError", true);
            }
            else
            {
                var reply = value as ToolReply;
                result.With("output", reply != null ? reply.Output : value);
                if (reply != null && reply.IsError) result.With("isError", true);
            }
            string line;
            try
            {
                line = Json.Serialize(new JsonObject().With("jsonrpc", "2.0").With("id", id).With("result", result));
            }
            catch (Exception e)
            {
                line = Json.Serialize(new JsonObject().With("jsonrpc", "2.0").With("id", id).With("result",
                    new JsonObject().With("output", "The tool result is not valid JSON: " + e.Message).With("isError", true)));
            }
            // Unsent, the model would wait for the tool's timeout: it gets an error output at once instead.
            if (TooLong(line, null) != null)
            {
                line = Json.Serialize(new JsonObject().With("jsonrpc", "2.0").With("id", id).With("result",
                    new JsonObject().With("output", "The tool result is " + Utf8.GetByteCount(line) + " bytes, longer than the "
                        + MaxLineBytes + " bytes the bridge reads.").With("isError", true)));
            }
            WriteLine(line);
        }

        void Reply(object id, object result, JsonObject error)
        {
            var message = new JsonObject().With("jsonrpc", "2.0").With("id", id);
            if (error != null) message.With("error", error);
            else message.With("result", result);
            WriteLine(Json.Serialize(message));
        }

        // ---------------------------------------------------------------------------------------- high level

        // why: for a request that cancels a whole NPC's or session's work, why its other requests were cancelled.
        internal async Task<JsonObject> Call(string method, object parameters, Action<JsonObject> onEvent = null,
            CancellationToken cancellationToken = default(CancellationToken), Action onCancel = null, int timeoutMs = 0,
            string why = null)
        {
            object result = await RequestCore(method, parameters, onEvent, null, cancellationToken, timeoutMs, onCancel,
                why).ConfigureAwait(false);
            return result as JsonObject ?? new JsonObject();
        }

        static JsonObject Params(params object[] pairs)
        {
            var result = new JsonObject();
            for (int i = 0; i + 1 < pairs.Length; i += 2)
                if (pairs[i + 1] != null) result[(string)pairs[i]] = pairs[i + 1];
            return result;
        }

        /// <summary>
        /// Checks an argument that is text or Json.Null (sent as null) or C# null (left out); anything else throws
        /// ArgumentException before a request is sent.
        /// </summary>
        static object TextOrNull(object value, string name)
        {
            if (value == null || value == Json.Null || value is string) return value;
            throw new ArgumentException("'" + name + "' must be a string or Json.Null; got " + value.GetType().Name + ".",
                name);
        }

        /// <summary>
        /// session/create. tools are names registered with RegisterTool. With history, the instructions and tools
        /// saved in it are used for each argument left at null; instructions: Json.Null resumes without the saved
        /// instructions, tools: new string[0] without the saved tools:
        /// <code>await oam.CreateSessionAsync(Json.Null, history: saved);</code>
        /// instructions is text or Json.Null (anything else throws ArgumentException).
        /// </summary>
        public async Task<OamSession> CreateSessionAsync(object instructions = null, IEnumerable<string> tools = null,
            object options = null, object model = null, string session = null, object history = null)
        {
            instructions = TextOrNull(instructions, "instructions");
            var result = await Call("session/create", Params("session", session, "instructions", instructions,
                "tools", tools != null ? ToolDefinitions(tools) : null, "options", options, "model", model,
                "history", history)).ConfigureAwait(false);
            return new OamSession(this, result.GetString("session"), result.GetArray("warnings"));
        }

        /// <summary>world/create.</summary>
        public async Task<OamWorld> CreateWorldAsync(object state = null, string world = null)
        {
            var result = await Call("world/create", Params("world", world, "state", state)).ConfigureAwait(false);
            return new OamWorld(this, result.GetString("world"));
        }

        /// <summary>npc/create. persona is a JsonObject (or any serializable object) with at least "name".</summary>
        public async Task<OamNpc> CreateNpcAsync(object persona, string npc = null, IEnumerable<string> tools = null,
            string world = null, object memory = null, object options = null, object model = null)
        {
            var result = await Call("npc/create", Params("npc", npc, "persona", persona,
                "tools", tools != null ? ToolDefinitions(tools) : null, "world", world, "memory", memory,
                "options", options, "model", model)).ConfigureAwait(false);
            return new OamNpc(this, result.GetString("npc"), model, result.GetArray("warnings"));
        }

        /// <summary>
        /// A handle for an NPC that exists on the bridge, by its id (a tool handler's ToolCallContext.Npc, an NPC
        /// created with RequestAsync). Sends nothing; a request on a handle whose NPC does not exist fails with
        /// -32050 npc_not_found. Its RestoreAsync uses the system model unless given one.
        /// <code>bridge.RegisterTool("give_sword", "Hand over a sword.", null, async (args, ctx) =&gt;
        ///     (object)(await bridge.Npc(ctx.Npc).StateAsync(settle: false)).GetObject("memory"));</code>
        /// </summary>
        public OamNpc Npc(string id) { return new OamNpc(this, HandleId(id, "npc")); }

        /// <summary>
        /// A handle for a session that exists on the bridge, by its id (ToolCallContext.Session, a session created
        /// with RequestAsync). Sends nothing; a request on it fails with -32020 session_not_found when there is none.
        /// <code>var guard = bridge.Session("guard"); await guard.RespondAsync("Halt?");</code>
        /// </summary>
        public OamSession Session(string id) { return new OamSession(this, HandleId(id, "session"), null); }

        /// <summary>
        /// A handle for a world that exists on the bridge, by its id (an NPC's save names its world). Sends nothing;
        /// a request on it fails with -32052 world_not_found when there is none.
        /// <code>var gold = await bridge.World("village").GetAsync("player.gold");</code>
        /// </summary>
        public OamWorld World(string id) { return new OamWorld(this, HandleId(id, "world")); }

        static string HandleId(string id, string kind)
        {
            if (string.IsNullOrEmpty(id))
                throw new ArgumentException("A " + kind + "'s id is a non-empty string; got " + (id == null ? "null" : "\"\"")
                    + ".", "id");
            return id;
        }

        /// <summary>
        /// npc/restore from a save made with OamNpc.StateAsync. The id, world, tools and options default to the saved
        /// ones (an argument left at null is not sent); one you give wins over the save: world is an OamWorld or a
        /// world id (another world), or Json.Null to restore the NPC without a world; tools are names registered with
        /// RegisterTool (an empty list: no client tools); options a JsonObject (or any serializable object), or
        /// Json.Null for the default options; npc an id, or Json.Null for a new generated id (a second copy of a save
        /// whose id is in use). The model is not saved: give it again unless it is the system model.
        /// <code>var twin = await oam.RestoreNpcAsync(save, npc: Json.Null);</code>
        /// </summary>
        public async Task<OamNpc> RestoreNpcAsync(object state, object npc = null, object model = null,
            object world = null, IEnumerable<string> tools = null, object options = null)
        {
            if (npc is OamNpc) npc = ((OamNpc)npc).Id;
            npc = TextOrNull(npc, "npc");
            var result = await Call("npc/restore", Params("state", state, "npc", npc, "model", model, "world", world,
                "tools", tools != null ? ToolDefinitions(tools) : null, "options", options)).ConfigureAwait(false);
            return new OamNpc(this, result.GetString("npc"), model, result.GetArray("warnings"));
        }

        // The bridge's warnings on a result the caller gets reduced to one value (a subscription id, the content, the
        // results): logged as the bridge's own log lines are (LogReceived, else Console.Error), "<call>: <warning>".
        void ReportWarnings(string where, object result)
        {
            var o = result as JsonObject;
            var warnings = o == null ? null : o.GetArray("warnings");
            if (warnings == null) return;
            foreach (var warning in warnings) Log(where + ": " + warning);
        }

        // A line of this client's own for the game's log: LogReceived (on the dispatcher), else Console.Error.
        void Log(string line)
        {
            var log = LogReceived;
            if (log != null) Post(() => log(line));
            else Console.Error.WriteLine("[open-apple-models] " + line);
        }

        // Marks a task's error as seen (no UnobservedTaskException for a request whose error nobody needs).
        static void ObserveErrors(Task task)
        {
            task.ContinueWith(t => t.Exception, CancellationToken.None, TaskContinuationOptions.OnlyOnFaulted,
                TaskScheduler.Default);
        }

        // OamNpc.RestoreAsync: the NPC replaced with a save under its id (npc/delete, then npc/restore), and put back
        // as it was when the bridge refuses the save.
        internal async Task<OamNpc> ReplaceNpcAsync(OamNpc npc, object state, object model, object world,
            IEnumerable<string> tools, object options)
        {
            string id = npc.Id;
            if (model == null) model = npc.Model;
            var parameters = Params("state", state, "npc", id, "model", model, "world", world,
                "tools", tools != null ? ToolDefinitions(tools) : null, "options", options);
            // Checked before the delete (an unknown tool above, a value JSON cannot send or a save longer than the
            // bridge reads here): a save this client refuses must not cost the NPC.
            OamBridgeException tooLong = TooLong(Json.Serialize(new JsonObject().With("jsonrpc", "2.0")
                .With("id", "cs-0").With("method", "npc/restore").With("params", parameters)), "npc/restore");
            if (tooLong != null) throw tooLong;
            // Queued in this order at once: the NPC as it is now (answered at once), the delete, the restore.
            var current = Call("npc/state", new JsonObject().With("npc", id).With("settle", false));
            // The running talk is cancelled with the delete: no more of its lines, and its error says why.
            var deleted = Call("npc/delete", new JsonObject().With("npc", id),
                why: "npc.RestoreAsync() replaced the NPC (it deletes it first).");
            ObserveErrors(current); // their errors are not the caller's
            ObserveErrors(deleted);
            try
            {
                var result = await Call("npc/restore", parameters).ConfigureAwait(false);
                return new OamNpc(this, result.GetString("npc"), model, result.GetArray("warnings"));
            }
            catch (OamBridgeException)
            {
                // A refused save must not cost the NPC: put back the one that was deleted for it.
                JsonObject previous = null;
                try { previous = (await current.ConfigureAwait(false)).GetObject("state"); }
                catch (OamBridgeException) { }
                if (previous != null)
                {
                    try
                    {
                        await Call("npc/restore", Params("state", previous, "npc", id, "model", npc.Model))
                            .ConfigureAwait(false);
                    }
                    catch (OamBridgeException) { }
                }
                throw;
            }
        }

        /// <summary>
        /// decision/decide: {optionID, reasoning, confidence, toolCalls, usage, isFallback}. Cancelling the token
        /// stops waiting (OperationCanceledException) and drops the late response; the protocol has no cancel for a
        /// decision, so the bridge still finishes it (its client tool calls still reach the handlers). tools are
        /// names registered with RegisterTool (toolChoice "required" forces a lookup before deciding). actor is a
        /// persona (JsonObject), or an NPC (OamNpc or its id) to decide as.
        /// </summary>
        public Task<JsonObject> DecideAsync(object situation, IEnumerable<object> options, object actor = null,
            object context = null, string fallbackOptionId = null, object model = null,
            CancellationToken cancellationToken = default(CancellationToken), IEnumerable<string> tools = null,
            object toolChoice = null, string instructions = null, double? temperature = null)
        {
            return Call("decision/decide", Params("situation", situation, "options", new List<object>(options),
                "actor", actor, "context", context, "fallbackOptionID", fallbackOptionId, "model", model,
                "tools", tools != null ? ToolDefinitions(tools) : null, "toolChoice", toolChoice,
                "instructions", instructions, "temperature", temperature), null, cancellationToken);
        }

        /// <summary>
        /// decision/decideMany: independent decisions (a crowd), each a JsonObject of DecideAsync's parameters as the
        /// protocol names them (situation, options, actor, context, tools, toolChoice, fallbackOptionID), sharing
        /// the engine settings given here. Returns the results in request order; a failed decision's result is
        /// {error: {code, message, data}}. Tool handlers see the decision's position in ToolCallContext.Index.
        /// Cancelling the token stops waiting, as for DecideAsync.
        /// </summary>
        public async Task<List<object>> DecideManyAsync(IEnumerable<object> requests, int? maxConcurrency = null,
            object model = null, string instructions = null, double? temperature = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var result = await Call("decision/decideMany", Params("requests", new List<object>(requests),
                "maxConcurrency", maxConcurrency, "model", model, "instructions", instructions,
                "temperature", temperature), null, cancellationToken).ConfigureAwait(false);
            ReportWarnings("DecideManyAsync", result);
            return result.GetArray("results") ?? new List<object>();
        }

        /// <summary>
        /// content/generate: the generated content. Cancelling the token stops waiting (OperationCanceledException)
        /// and drops the late response; the protocol has no cancel for it, so the bridge still finishes it. tools are
        /// names registered with RegisterTool.
        /// </summary>
        public async Task<object> GenerateAsync(string prompt, object schema, string instructions = null,
            object context = null, object model = null, CancellationToken cancellationToken = default(CancellationToken),
            IEnumerable<string> tools = null, double? temperature = null)
        {
            var result = await Call("content/generate", Params("prompt", prompt, "schema", schema,
                "instructions", instructions, "context", context, "model", model,
                "tools", tools != null ? ToolDefinitions(tools) : null, "temperature", temperature), null, cancellationToken)
                .ConfigureAwait(false);
            ReportWarnings("GenerateAsync", result);
            return result.Get("content");
        }

        internal async Task<string> Subscribe(string world, string path, Action<JsonObject> onChanged)
        {
            object result = await RequestCore("world/subscribe", Params("world", world, "path", path), null,
                r =>
                {
                    var o = r as JsonObject;
                    if (o != null) lock (gate) subscriptions[o.GetString("subscription") ?? ""] = onChanged;
                }, default(CancellationToken), 0, null).ConfigureAwait(false);
            ReportWarnings("world.SubscribeAsync('" + path + "')", result);
            return ((JsonObject)result).GetString("subscription");
        }

        internal Task Unsubscribe(string subscription)
        {
            // The callback stops at once, not when the bridge answers (changes already sent are not delivered).
            lock (gate) subscriptions.Remove(subscription);
            return Call("world/unsubscribe", Params("subscription", subscription));
        }

        // ---------------------------------------------------------------------------------------- shutdown

        /// <summary>
        /// Shuts the bridge down (cancelling its work) and waits for the process to exit: a few milliseconds
        /// usually. A bridge that writes nothing within 0.5 s of the shutdown (frozen, stopped in a debugger, not
        /// reading its input: the lines still queued for it are dropped) is killed then; one that still answers (a ping sent
        /// after the shutdown) gets up to about 3 s to finish its cancelled work and is killed after that. Waiting
        /// requests, and any made later, fail with a -32023 shut_down error "The bridge was closed." (delivered
        /// through the dispatcher: pump it once more). Turn events, world changes and tool calls still queued for the
        /// dispatcher are dropped: no callback or tool handler runs after Dispose.
        /// </summary>
        void DisposeOnUnload(object sender, EventArgs e) { Dispose(); }

        public void Dispose()
        {
            AppDomain.CurrentDomain.DomainUnload -= DisposeOnUnload;
            var closed = new OamBridgeException(OamBridgeException.ShutDown, "shut_down", "The bridge was closed.");
            Outstanding outstanding;
            lock (gate)
            {
                if (disposed) return;
                disposed = true;
                dead = closed;
                outstanding = TakeOutstandingLocked();
                subscriptions.Clear(); // changes already queued for the dispatcher are not delivered
            }
            FailOutstanding(outstanding, closed);
            if (process == null) return;
            try
            {
                if (!process.HasExited)
                {
                    var shutdown = new JsonObject().With("jsonrpc", "2.0").With("id", "cs-shutdown").With("method", "shutdown");
                    // After shutdown every request fails at once (PROTOCOL.md, shutdown): the answer to this ping
                    // shows the bridge is alive even while the shutdown waits for its cancelled work.
                    var probe = new JsonObject().With("jsonrpc", "2.0").With("id", "cs-shutdown-ping").With("method", "ping");
                    shuttingDown = true;
                    // Queued behind the lines sent before: on a bridge that stopped reading with its input pipe full,
                    // the writer thread stays blocked until the kill below ends the process.
                    var watch = Stopwatch.StartNew();
                    WriteLine(Json.Serialize(shutdown));
                    WriteLine(Json.Serialize(probe));
                    CloseInput();
                    // A bridge that writes nothing (frozen, stopped) is killed now; one that answers gets the grace.
                    // (Disposed from a callback on the reader thread, nothing reads its answer: it gets the grace.)
                    bool answered = reader == Thread.CurrentThread || heardDuringShutdown.WaitOne(ShutdownAnswerMs);
                    bool exited = answered
                        ? process.WaitForExit((int)Math.Max(0, ShutdownGraceMs - watch.ElapsedMilliseconds))
                        : process.WaitForExit(0);
                    if (!exited)
                    {
                        try { process.Kill(); } catch (Exception) { }
                        process.WaitForExit(2000);
                    }
                }
            }
            catch (Exception) { }
            CloseInput(); // a bridge that had exited already: ends the writer thread
            if (writer != null) writer.Join(2000);
            if (reader != null && reader != Thread.CurrentThread) reader.Join(3000);
            try { process.Dispose(); } catch (Exception) { }
        }
    }

    /// <summary>
    /// Starts a new bridge when the running one ends by itself (OamBridge.Exited: a crash, a kill; not Dispose),
    /// after backoffSeconds, doubled for each restart in a row (1 s, 2 s, 4 s), at most maxRestarts times in a row:
    /// then GaveUp gets the last error and it stops. A bridge that ran StableSeconds (60) before it ended starts a new
    /// count. Call Tick(now) on the main thread every frame (OamBridgeBehaviour does with restartOnCrash on); the
    /// restart happens there. The tools registered on the old bridge are registered on the new one (create makes it,
    /// not started; Tick starts it); sessions, NPCs, worlds, subscriptions and event handlers lived with the old
    /// process or object and are gone: re-create them in Restarted. Requests made on the old bridge keep failing with
    /// -32023. A bridge that could not start (Start() threw) counts as a crash of the restart. A bridge that never
    /// started (Start() threw before it was given here) raises no Exited and is not restarted.
    /// </summary>
    public sealed class OamBridgeRestarter
    {
        readonly Func<OamBridge> create;
        readonly int maxRestarts;
        readonly double backoffSeconds;
        volatile OamBridgeException crash; // set by the bridge's Exited (on its dispatcher), taken by Tick
        double startedAt = -1;              // Tick's clock when the bridge was given or started; -1: not yet seen
        double dueAt = -1;                  // when the restart is due; -1: none
        bool stopped;

        /// <summary>How long a bridge must have run before it ended for its restart to count as the first in a row.</summary>
        public double StableSeconds = 60;

        /// <param name="bridge">the running bridge (its Exited is watched).</param>
        /// <param name="create">makes the next bridge, not started (same command and dispatcher).</param>
        public OamBridgeRestarter(OamBridge bridge, Func<OamBridge> create, int maxRestarts = 3, double backoffSeconds = 1)
        {
            if (bridge == null) throw new ArgumentNullException("bridge");
            if (create == null) throw new ArgumentNullException("create");
            this.create = create;
            this.maxRestarts = maxRestarts;
            this.backoffSeconds = backoffSeconds;
            Watch(bridge);
        }

        /// <summary>The current bridge: the last one started (also when it has died and no restart follows).</summary>
        public OamBridge Bridge { get; private set; }

        /// <summary>Restarts since the last bridge that ran StableSeconds.</summary>
        public int RestartsInARow { get; private set; }

        /// <summary>A new bridge was started and replaces the old one (raised by Tick, on the main thread).</summary>
        public event Action<OamBridge> Restarted;

        /// <summary>The bridge ended once more after maxRestarts restarts in a row: no more restarts.</summary>
        public event Action<OamBridgeException> GaveUp;

        void Watch(OamBridge bridge)
        {
            Bridge = bridge;
            bridge.Exited += error =>
            {
                if (bridge == Bridge) crash = error;
            };
        }

        /// <summary>Call every frame with a clock in seconds (Time.realtimeSinceStartup): restarts when due.</summary>
        public void Tick(double now)
        {
            if (stopped) return;
            if (startedAt < 0) startedAt = now;
            if (crash != null && dueAt < 0)
            {
                if (now - startedAt >= StableSeconds) RestartsInARow = 0;
                if (RestartsInARow >= maxRestarts)
                {
                    stopped = true;
                    var gaveUp = GaveUp;
                    if (gaveUp != null) gaveUp(crash);
                    return;
                }
                dueAt = now + backoffSeconds * Math.Pow(2, RestartsInARow);
            }
            if (dueAt < 0 || now < dueAt) return;
            dueAt = -1;
            crash = null;
            RestartsInARow++;
            OamBridge old = Bridge;
            OamBridge next = create();
            next.RegisterToolsFrom(old);
            old.Dispose(); // its process is gone: this only ends its threads
            Watch(next);
            startedAt = now;
            try
            {
                next.Start();
            }
            catch (OamBridgeException error)
            {
                crash = error; // the next Tick schedules the next try (or gives up)
                return;
            }
            var restarted = Restarted;
            if (restarted != null) restarted(next);
        }

        /// <summary>No restart from now on (the game quits, the owner is destroyed).</summary>
        public void Stop() { stopped = true; }
    }

    // ------------------------------------------------------------------------------------------------
    // Sessions, NPCs, worlds
    // ------------------------------------------------------------------------------------------------

    /// <summary>An agent session (session/*).</summary>
    public sealed class OamSession
    {
        public OamBridge Bridge { get; private set; }
        public string Id { get; private set; }
        public List<object> Warnings { get; private set; }

        internal OamSession(OamBridge bridge, string id, List<object> warnings)
        {
            Bridge = bridge;
            Id = id;
            Warnings = warnings ?? new List<object>();
        }

        /// <summary>
        /// Runs one turn: {session, text, structured?, toolCalls, usage, steps}. onText gets the whole answer so far
        /// after every change; onEvent every session/event. Streaming is on when either is given. Cancelling the
        /// token (or timeoutMs passing) sends session/cancel and throws OperationCanceledException (timeout:
        /// OamBridgeException -32024). session/cancel stops the whole session's work: other turns still queued on
        /// this session fail with OamBridgeException -32009 cancelled, whose message says why ("... 'session/respond'
        /// was cancelled with the rest of session 'guide''s work when its 'session/respond' timed out after 1500 ms
        /// (timeoutMs): ...").
        /// </summary>
        public Task<JsonObject> RespondAsync(string prompt, Action<string> onText = null, Action<JsonObject> onEvent = null,
            CancellationToken cancellationToken = default(CancellationToken), object schema = null, object toolChoice = null,
            int timeoutMs = 0)
        {
            Action<JsonObject> handler = null;
            if (onText != null || onEvent != null)
            {
                handler = evt =>
                {
                    if (onEvent != null) onEvent(evt);
                    if (onText != null && evt.GetString("type") == "text") onText(evt.GetString("text") ?? "");
                };
            }
            var parameters = new JsonObject().With("session", Id).With("prompt", prompt);
            if (handler != null) parameters.With("stream", true);
            if (schema != null) parameters.With("schema", schema);
            if (toolChoice != null) parameters.With("toolChoice", toolChoice);
            string id = Id;
            return Bridge.Call("session/respond", parameters, handler, cancellationToken,
                () => Bridge.NotifyCancel("session/cancel", new JsonObject().With("session", id)), timeoutMs);
        }

        /// <summary>
        /// session/cancel: cancels the running turn (its RespondAsync fails with OamBridgeException -32009 cancelled)
        /// and the session's queued work; the result has "cancelled", how many. From this call on, the turn's onText
        /// and onEvent get nothing more, also the text already on its way (a turn that had already ended still
        /// gives its reply), as when its cancellation token is cancelled.
        /// <code>await guard.CancelAsync(); // the player walked away: the answer stops where it was</code>
        /// </summary>
        public Task<JsonObject> CancelAsync()
        {
            return Bridge.Call("session/cancel", new JsonObject().With("session", Id));
        }
        /// <summary>
        /// session/delete: cancels the session's work (its running RespondAsync fails with a -32009 cancelled
        /// OamBridgeException whose message says session.DeleteAsync() deleted the session, or gives its result when
        /// it had already ended) and frees it. From this call on, the
        /// turn's onText and onEvent get nothing more, as with CancelAsync.
        /// <code>await guard.DeleteAsync(); // the level ends: the answer stops where it was</code>
        /// </summary>
        public Task<JsonObject> DeleteAsync()
        {
            return Bridge.Call("session/delete", new JsonObject().With("session", Id),
                why: "session.DeleteAsync() deleted the session.");
        }

        /// <summary>
        /// session/reset, queued behind the session's earlier turns. Cancelling the token stops waiting
        /// (OperationCanceledException) and drops the late response; the reset still happens when its turn comes
        /// (CancelAsync first to drop the queued turns instead).
        /// </summary>
        public Task<JsonObject> ResetAsync(CancellationToken cancellationToken = default(CancellationToken))
        {
            return Bridge.Call("session/reset", new JsonObject().With("session", Id), null, cancellationToken);
        }

        /// <summary>session/setInstructions (null removes them); applies from the next turn.</summary>
        public Task<JsonObject> SetInstructionsAsync(string instructions)
        {
            return Bridge.Call("session/setInstructions", new JsonObject().With("session", Id).With("instructions", instructions));
        }

        /// <summary>
        /// session/setContextNote: extra context after the instructions (world facts, quest state; null removes it);
        /// applies from the next turn.
        /// </summary>
        public Task<JsonObject> SetContextNoteAsync(string note)
        {
            return Bridge.Call("session/setContextNote", new JsonObject().With("session", Id).With("note", note));
        }

        /// <summary>session/setTools: replaces the tools (names registered with RegisterTool) from the next turn.</summary>
        public Task<JsonObject> SetToolsAsync(IEnumerable<string> tools)
        {
            return Bridge.Call("session/setTools", new JsonObject().With("session", Id)
                .With("tools", Bridge.ToolDefinitions(tools ?? new string[0])));
        }

        /// <summary>
        /// session/compact: summarizes all but the last keepRecentTurns turns (default 2) into the context note (one
        /// model call, queued behind the session's turns). Returns the summary, or null when there was nothing to
        /// compact. Cancelling the token sends session/cancel like RespondAsync (the history stays as it was).
        /// </summary>
        public async Task<string> CompactAsync(int? keepRecentTurns = null, string summaryInstructions = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var parameters = new JsonObject().With("session", Id);
            if (keepRecentTurns.HasValue) parameters.With("keepRecentTurns", keepRecentTurns.Value);
            if (summaryInstructions != null) parameters.With("summaryInstructions", summaryInstructions);
            string id = Id;
            var result = await Bridge.Call("session/compact", parameters, null, cancellationToken,
                () => Bridge.NotifyCancel("session/cancel", new JsonObject().With("session", id))).ConfigureAwait(false);
            return result.GetString("summary");
        }

        /// <summary>session/transcript: save it and pass it as history to CreateSessionAsync to resume.</summary>
        public async Task<object> TranscriptAsync()
        {
            var result = await Bridge.Call("session/transcript", new JsonObject().With("session", Id)).ConfigureAwait(false);
            return result.Get("transcript");
        }
    }

    /// <summary>A non-player character (npc/*).</summary>
    public sealed class OamNpc
    {
        public OamBridge Bridge { get; private set; }
        public string Id { get; private set; }
        // The model it was created or restored with (a save does not hold it): RestoreAsync's default.
        internal object Model { get; private set; }

        /// <summary>
        /// The warnings of the npc/create or npc/restore that made this handle (an unknown persona or options field, a
        /// tool schema keyword described to the model but not enforced); empty when there were none.
        /// </summary>
        public List<object> Warnings { get; private set; }

        internal OamNpc(OamBridge bridge, string id, object model = null, List<object> warnings = null)
        {
            Bridge = bridge;
            Id = id;
            Model = model;
            Warnings = warnings ?? new List<object>();
        }

        /// <summary>
        /// One dialogue turn: {npc, line, emotion, playerOptions, endsConversation, toolCalls, relationship,
        /// isFallback, usage}. onLine gets the whole line so far after every lineDelta/lineReset (typewriter),
        /// onEmotion the emotion as soon as it is chosen, onEvent every npc/event: emotion, lineDelta, lineReset,
        /// toolCallStarted, toolCallCompleted (an NPC's turn has no modelStep, unlike a session's). Cancelling the token (or timeoutMs passing) sends npc/cancel
        /// and throws OperationCanceledException (timeout: OamBridgeException -32024); npc/cancel also fails the
        /// NPC's other queued talks with -32009 cancelled, whose message says why ("... 'npc/talk' was cancelled with
        /// the rest of NPC 'gorm''s work when the CancellationToken of its 'npc/talk' was cancelled: ..."). toolChoice overrides the NPC's for this turn ("none",
        /// "required", new JsonObject().With("tool", name); a tool the NPC lacks fails with -32011).
        /// From the moment the token is cancelled, no onLine, onEmotion or onEvent call reaches the game, also for
        /// lines already on their way (a turn that had already ended still gives its reply); a callback that throws
        /// (a destroyed label) is reported once and gets no more events of the turn.
        /// </summary>
        public Task<JsonObject> TalkAsync(string line, Action<string> onLine = null, Action<string> onEmotion = null,
            Action<JsonObject> onEvent = null, object context = null,
            CancellationToken cancellationToken = default(CancellationToken), int timeoutMs = 0, object toolChoice = null)
        {
            Action<JsonObject> handler = null;
            if (onLine != null || onEmotion != null || onEvent != null)
            {
                var shown = new StringBuilder();
                handler = evt =>
                {
                    if (onEvent != null) onEvent(evt);
                    string type = evt.GetString("type");
                    if (type == "lineDelta") { shown.Append(evt.GetString("delta")); if (onLine != null) onLine(shown.ToString()); }
                    else if (type == "lineReset")
                    {
                        shown.Length = 0;
                        shown.Append(evt.GetString("line"));
                        if (onLine != null) onLine(shown.ToString());
                    }
                    else if (type == "emotion" && onEmotion != null) onEmotion(evt.GetString("emotion"));
                };
            }
            var parameters = new JsonObject().With("npc", Id).With("line", line);
            if (context != null) parameters.With("context", context);
            if (toolChoice != null) parameters.With("toolChoice", toolChoice);
            if (handler != null) parameters.With("stream", true);
            string id = Id;
            return Bridge.Call("npc/talk", parameters, handler, cancellationToken,
                () => Bridge.NotifyCancel("npc/cancel", new JsonObject().With("npc", id)), timeoutMs);
        }

        /// <summary>
        /// npc/bark: a short ambient line. Cancelling the token stops waiting (OperationCanceledException) and
        /// drops the late response; the protocol has no cancel for a bark (npc/cancel does not reach it; DeleteAsync
        /// ends it), so the bridge still finishes it.
        /// </summary>
        public async Task<string> BarkAsync(object situation = null,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var parameters = new JsonObject().With("npc", Id);
            if (situation != null) parameters.With("situation", situation);
            return (await Bridge.Call("npc/bark", parameters, null, cancellationToken).ConfigureAwait(false))
                .GetString("line");
        }

        /// <summary>
        /// npc/state: the save state (store it whole; restore with OamBridge.RestoreNpcAsync). It waits for the
        /// NPC's earlier talks; with settle: false it answers at once with the completed turns, which is how a tool
        /// handler saves its own NPC (a settled save waits for the talk that called the tool, until the tool's
        /// timeout). Cancelling the token stops waiting (OperationCanceledException) and drops the late response; the
        /// NPC's talks go on (CancelAsync cancels them).
        /// <code>var save = await bridge.Npc(ctx.Npc).StateAsync(settle: false); // in a tool handler</code>
        /// </summary>
        public async Task<JsonObject> StateAsync(CancellationToken cancellationToken = default(CancellationToken),
            bool settle = true)
        {
            var parameters = new JsonObject().With("npc", Id);
            if (!settle) parameters.With("settle", false);
            return (await Bridge.Call("npc/state", parameters, null, cancellationToken)
                .ConfigureAwait(false)).GetObject("state");
        }

        /// <summary>
        /// npc/update with merge patches, queued behind the NPC's earlier talks: persona, options and memory hold the
        /// fields to change, and a field set to null (JsonObject.With("summary", null), Json.Null) is reset to its
        /// default; tools (names registered with RegisterTool; new string[0]: none) replace the client tools. An
        /// argument left at null changes nothing. Cancelling the token stops waiting (OperationCanceledException)
        /// and drops the late response; the update is still applied when its turn comes (CancelAsync first to drop
        /// it with the queued talks). Returns {npc, warnings}.
        /// <code>await gorm.UpdateAsync(memory: new JsonObject().With("relationship", 40), tools: new[] { "open_gate" });</code>
        /// </summary>
        public Task<JsonObject> UpdateAsync(object persona = null, object options = null, object memory = null,
            CancellationToken cancellationToken = default(CancellationToken), IEnumerable<string> tools = null)
        {
            var parameters = new JsonObject().With("npc", Id);
            if (persona != null) parameters.With("persona", persona);
            if (options != null) parameters.With("options", options);
            if (memory != null) parameters.With("memory", memory);
            if (tools != null) parameters.With("tools", Bridge.ToolDefinitions(tools));
            return Bridge.Call("npc/update", parameters, null, cancellationToken);
        }

        /// <summary>
        /// npc/reset: clears the conversation (and with clearMemory the facts, relationship and summary), queued
        /// behind the NPC's earlier talks. Cancelling the token stops waiting (OperationCanceledException); the
        /// reset still happens when its turn comes.
        /// </summary>
        public Task<JsonObject> ResetAsync(bool clearMemory = false,
            CancellationToken cancellationToken = default(CancellationToken))
        {
            var parameters = new JsonObject().With("npc", Id);
            if (clearMemory) parameters.With("clearMemory", true);
            return Bridge.Call("npc/reset", parameters, null, cancellationToken);
        }

        /// <summary>
        /// npc/cancel: cancels the running talk (its TalkAsync fails with OamBridgeException -32009 cancelled) and
        /// the NPC's queued requests; the result has "cancelled", how many. From this call on, the talk's onLine,
        /// onEmotion and onEvent get nothing more, also the rest of a line already on its way (a talk that had
        /// already ended still gives its reply), as when its cancellation token is cancelled.
        /// <code>await gorm.CancelAsync(); // the player walked away: the line stops where it was</code>
        /// </summary>
        public Task<JsonObject> CancelAsync()
        {
            return Bridge.Call("npc/cancel", new JsonObject().With("npc", Id));
        }
        /// <summary>
        /// npc/delete: cancels the NPC's work (its running TalkAsync fails with a -32009 cancelled
        /// OamBridgeException whose message says npc.DeleteAsync() deleted the NPC, or gives its reply when it had
        /// already ended) and frees it. From this call on, the
        /// talk's onLine, onEmotion and onEvent get nothing more, as with CancelAsync. To load a save over a living
        /// NPC, use RestoreAsync.
        /// <code>await gorm.DeleteAsync(); // Gorm dies mid-sentence: the line stops where it was</code>
        /// </summary>
        public Task<JsonObject> DeleteAsync()
        {
            return Bridge.Call("npc/delete", new JsonObject().With("npc", Id), why: "npc.DeleteAsync() deleted the NPC.");
        }

        /// <summary>
        /// Replaces this NPC with a save made with StateAsync (npc/delete, then npc/restore under its id): the player
        /// loads a save over a living NPC. Completes with the restored NPC's handle. world, tools and options are as in
        /// OamBridge.RestoreNpcAsync (left at null: the saved ones); the model is not saved, and defaults to the one
        /// this handle was created or restored with. A running TalkAsync fails with a -32009 cancelled
        /// OamBridgeException that says npc.RestoreAsync() replaced the NPC (or gives its reply when it had already
        /// ended), and from this call on its onLine,
        /// onEmotion and onEvent get nothing more, as with DeleteAsync. When the bridge refuses the save (a field
        /// edited by hand), the task fails with that error and the NPC is put back as it was (its completed turns,
        /// memory, tools and world; the talk that was running stays cancelled). An unknown tool name or a value JSON
        /// cannot send (NaN) fails it with an ArgumentException before anything is sent.
        /// <code>gorm = await gorm.RestoreAsync(save); // the player loads a save: the story stops where it was</code>
        /// </summary>
        public Task<OamNpc> RestoreAsync(object state, object model = null, object world = null,
            IEnumerable<string> tools = null, object options = null)
        {
            return Bridge.ReplaceNpcAsync(this, state, model, world, tools, options);
        }
    }

    /// <summary>A world-state blackboard (world/*). Paths are dot paths ("player.gold"; "" is the root).</summary>
    public sealed class OamWorld
    {
        public OamBridge Bridge { get; private set; }
        public string Id { get; private set; }

        internal OamWorld(OamBridge bridge, string id) { Bridge = bridge; Id = id; }

        /// <summary>An OamWorld goes where a world id goes (CreateNpcAsync(..., world: village)).</summary>
        public static implicit operator string(OamWorld world) { return world == null ? null : world.Id; }

        /// <summary>The value at path (null when absent).</summary>
        public async Task<object> GetAsync(string path = "")
        {
            return (await Bridge.Call("world/get", new JsonObject().With("world", Id).With("path", path))
                .ConfigureAwait(false)).Get("value");
        }

        /// <summary>world/set; returns the new version.</summary>
        public async Task<long> SetAsync(string path, object value)
        {
            return (await Bridge.Call("world/set", new JsonObject().With("world", Id).With("path", path).With("value", value))
                .ConfigureAwait(false)).GetLong("version");
        }

        /// <summary>world/merge (RFC 7386 merge patch); returns the new version.</summary>
        public async Task<long> MergeAsync(object patch, string path = "")
        {
            return (await Bridge.Call("world/merge", new JsonObject().With("world", Id).With("path", path).With("patch", patch))
                .ConfigureAwait(false)).GetLong("version");
        }

        /// <summary>world/remove: {world, path, removed, oldValue?, version}.</summary>
        public Task<JsonObject> RemoveAsync(string path)
        {
            return Bridge.Call("world/remove", new JsonObject().With("world", Id).With("path", path));
        }

        /// <summary>world/delete: {world, deleted, endedSubscriptions}. NPCs created with it keep using it.</summary>
        public Task<JsonObject> DeleteAsync() { return Bridge.Call("world/delete", new JsonObject().With("world", Id)); }

        /// <summary>world/snapshot: the whole state.</summary>
        public async Task<JsonObject> SnapshotAsync()
        {
            return (await Bridge.Call("world/snapshot", new JsonObject().With("world", Id)).ConfigureAwait(false)).GetObject("state");
        }

        /// <summary>
        /// Calls onChanged (on the dispatcher) for every world/changed at, inside or above path with
        /// {world, subscription, path, oldValue?, newValue?}. Returns the subscription id.
        /// </summary>
        public Task<string> SubscribeAsync(string path, Action<JsonObject> onChanged)
        {
            return Bridge.Subscribe(Id, path, onChanged);
        }

        /// <summary>
        /// world/unsubscribe. The callback stops at once, also for changes already on their way; the task finishes
        /// when the bridge has ended the subscription.
        /// </summary>
        public Task UnsubscribeAsync(string subscription) { return Bridge.Unsubscribe(subscription); }
    }
}
