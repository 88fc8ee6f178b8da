// OamBridgeTests.cs - console tests of OpenAppleModels.cs against the real bridge process (scripted models).
//
//   mcs -out:.build/bindings/unity/OamBridgeTests.exe bindings/unity/OpenAppleModels.cs bindings/unity/tests/OamBridgeTests.cs
//   OAM_BRIDGE_COMMAND="deno run --allow-read --allow-env --allow-ffi /path/cli.ts stdio" mono .build/bindings/unity/OamBridgeTests.exe
//
// The callbacks go through an OamMainThreadQueue pumped by this thread, like Update() in Unity.

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Text.RegularExpressions;
using System.Threading;
using System.Threading.Tasks;
using OpenAppleModels;

static class OamBridgeTests
{
    static int failures;
    static int checks;
    static string current = "";
    // Failures go here also while a test captures Console.Error.
    static readonly System.IO.TextWriter report = Console.Error;
    static int mainThread;

    static void Check(bool condition, string what)
    {
        checks++;
        if (!condition)
        {
            failures++;
            report.WriteLine("FAIL " + current + ": " + what);
        }
    }

    static JsonObject Scripted(params object[] steps)
    {
        return new JsonObject().With("type", "scripted").With("steps", new List<object>(steps));
    }

    static JsonObject O() { return new JsonObject(); }

    static readonly JsonObject GateSchema = O().With("type", "object")
        .With("properties", O().With("gate", O().With("type", "string")))
        .With("required", new List<object> { "gate" });

    static JsonObject GateStep(string gate)
    {
        return O().With("toolCalls", new List<object> { O().With("name", "open_gate").With("arguments", O().With("gate", gate)) });
    }

    /// Pumps the queue (like Update()) until the task finishes.
    static T Wait<T>(OamMainThreadQueue queue, Task<T> task, int timeoutMs = 15000)
    {
        var watch = Stopwatch.StartNew();
        while (!task.IsCompleted)
        {
            queue.Pump();
            if (watch.ElapsedMilliseconds > timeoutMs) throw new TimeoutException("the task did not finish in " + timeoutMs + " ms");
            Thread.Sleep(1);
        }
        queue.Pump();
        return task.GetAwaiter().GetResult();
    }

    /// Pumps the queue until a task without a result finishes.
    static void Wait(OamMainThreadQueue queue, Task task, int timeoutMs = 15000)
    {
        Wait(queue, task.ContinueWith(t => { t.GetAwaiter().GetResult(); return true; }), timeoutMs);
    }

    static Exception WaitError<T>(OamMainThreadQueue queue, Task<T> task, int timeoutMs = 15000)
    {
        try
        {
            Wait(queue, task, timeoutMs);
            return null;
        }
        catch (Exception e)
        {
            return e;
        }
    }

    static OamBridge Start(OamMainThreadQueue queue)
    {
        var bridge = new OamBridge(null, queue);
        bridge.Start();
        Wait(queue, bridge.InitializeAsync("tests"));
        return bridge;
    }

    static void TestJson()
    {
        current = "json";
        var parsed = (JsonObject)Json.Parse("{\"a\":[1,2.5,\"x\\n\\u00e9\",true,null],\"b\":{\"c\":-3e2}}");
        Check(Json.Serialize(parsed) == "{\"a\":[1,2.5,\"x\\n\u00e9\",true,null],\"b\":{\"c\":-300}}", Json.Serialize(parsed));
        Check(parsed.GetArray("a")[0] is long, "integers parse as long");
        Check(Json.Serialize(new { session = "s", stream = true, n = 1.5f }) == "{\"session\":\"s\",\"stream\":true,\"n\":1.5}",
            Json.Serialize(new { session = "s", stream = true, n = 1.5f }));
        bool threw = false;
        try { Json.Parse("{\"a\":1,}"); } catch (FormatException) { threw = true; }
        Check(threw, "trailing comma rejected");
        threw = false;
        try { Json.Parse("[1] x"); } catch (FormatException) { threw = true; }
        Check(threw, "trailing characters rejected");
        threw = false;
        try { Json.Serialize(double.NaN); } catch (ArgumentException) { threw = true; }
        Check(threw, "NaN rejected");
        Check(TrySerialize(new { hp = 0.1f, speed = 2.5f, big = 1e-10f }) == "{\"hp\":0.1,\"speed\":2.5,\"big\":1E-10}",
            "floats keep their short form: " + Json.Serialize(new { hp = 0.1f, speed = 2.5f, big = 1e-10f }));
        Check(TrySerialize(new Vector(1, 2.5f, -3)) == "{\"x\":1,\"y\":2.5,\"z\":-3}",
            "a struct with public fields (like Vector3) writes its fields: " + TrySerialize(new Vector(1, 2.5f, -3)));
        Check(TrySerialize(new DateTime(2026, 1, 2, 3, 4, 5, DateTimeKind.Utc)) == "\"2026-01-02T03:04:05.0000000Z\"",
            "DateTime: " + TrySerialize(new DateTime(2026, 1, 2, 3, 4, 5, DateTimeKind.Utc)));
        var guid = Guid.NewGuid();
        Check(TrySerialize(guid) == "\"" + guid + "\"", "Guid: " + Json.Serialize(guid));
        Check(TrySerialize(new KeyValuePair<string, int>("a", 1)) == "{\"Key\":\"a\",\"Value\":1}",
            "a struct without public fields writes its properties: " + TrySerialize(new KeyValuePair<string, int>("a", 1)));
        string propertyError = TrySerialize(new Throwing());
        Check(propertyError.Contains("Throwing.Broken") && propertyError.Contains("not wired"), propertyError);
        var nested = "";
        for (int i = 0; i < 1000; i++) nested += "[";
        threw = false;
        try { Json.Parse(nested); } catch (FormatException) { threw = true; }
        Check(threw, "deep nesting rejected");
    }

    // Runs a streamed turn whose onText captures a "label"; returns a weak reference to that label.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    static WeakReference TurnWithLabel(OamMainThreadQueue queue, OamSession session, CancellationToken token)
    {
        var label = new System.Text.StringBuilder();
        Wait(queue, session.RespondAsync("x", onText: t => label.Append(t), cancellationToken: token));
        return new WeakReference(label);
    }

    static string TrySerialize(object value)
    {
        try { return Json.Serialize(value); }
        catch (Exception e) { return e.GetType().Name + ": " + e.Message; }
    }

    static string Safe<T>(Func<T> read)
    {
        try { return Convert.ToString(read()); }
        catch (Exception e) { return e.GetType().Name + ": " + e.Message; }
    }

    struct Vector
    {
        public float x, y, z;
        public Vector(float x, float y, float z) { this.x = x; this.y = y; this.z = z; }
        public Vector normalized { get { return new Vector(x / 2, y / 2, z / 2); } }
        public float magnitude { get { return 2; } }
    }

    sealed class Throwing
    {
        public int Broken { get { throw new InvalidOperationException("not wired"); } }
    }

    static void TestSessions()
    {
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        try
        {
            current = "initialize";
            Check(bridge.ServerInfo.GetObject("server").GetString("name") == "open-apple-models", bridge.ServerInfo.ToString());

            current = "plain turn";
            var plain = Wait(queue, bridge.CreateSessionAsync("You are a guard.", model: Scripted(O().With("text", "Halt!"))));
            var result = Wait(queue, plain.RespondAsync("Hello"));
            Check(result.GetString("text") == "Halt!", result.ToString());

            current = "tool round trip on the main thread";
            int toolThread = 0;
            bridge.RegisterTool("open_gate", "Open a named gate.", GateSchema, args =>
            {
                toolThread = Thread.CurrentThread.ManagedThreadId;
                return O().With("opened", true).With("gate", args.GetString("gate"));
            });
            var guard = Wait(queue, bridge.CreateSessionAsync(tools: new[] { "open_gate" },
                model: Scripted(GateStep("north"), O().With("template", "Gate: {toolOutput}"))));
            var texts = new List<string>();
            var eventTypes = new List<string>();
            bool eventsOnMain = true;
            result = Wait(queue, guard.RespondAsync("Open the north gate.", onText: texts.Add, onEvent: e =>
            {
                eventTypes.Add(e.GetString("type"));
                if (Thread.CurrentThread.ManagedThreadId != mainThread) eventsOnMain = false;
            }));
            Check(toolThread == mainThread, "tool handler ran on thread " + toolThread);
            Check(result.GetString("text") == "Gate: {\"opened\":true,\"gate\":\"north\"}", result.ToString());
            var record = (JsonObject)result.GetArray("toolCalls")[0];
            Check(!record.GetBool("isError"), record.ToString());

            current = "a tool's output is read on the main thread";
            // args => enemies.Where(e => e.alive).Select(e => e.name): a lazy query whose items read Unity objects,
            // which may only be touched on the main thread; so may a property of a returned object.
            var readOn = new List<int>();
            bridge.RegisterTool("count_wolves", "Count the wolves.", null, args =>
                System.Linq.Enumerable.Select(new[] { "grey", "white" }, name =>
                {
                    readOn.Add(Thread.CurrentThread.ManagedThreadId);
                    return name;
                }));
            var hunter = Wait(queue, bridge.CreateSessionAsync(tools: new[] { "count_wolves" },
                model: Scripted(O().With("toolCalls", new List<object> { O().With("name", "count_wolves").With("arguments", O()) }),
                    O().With("template", "{toolOutput}"))));
            var wolves = Wait(queue, hunter.RespondAsync("How many?"));
            Check(wolves.GetString("text") == "[\"grey\",\"white\"]", wolves.ToString());
            Check(readOn.Count == 2 && readOn.TrueForAll(t => t == mainThread),
                "the output was read on threads " + string.Join(",", readOn.ConvertAll(t => "" + t).ToArray()) + ", main " + mainThread);

            current = "a one-argument tool handler that returns a Task";
            // A handler written args => OpenGateAsync(args): its result is the output, awaited, not the Task itself.
            bridge.RegisterTool("lower_bridge", "Lower the drawbridge.", null, args =>
            {
                var lowered = new TaskCompletionSource<JsonObject>();
                queue.Post(() => lowered.SetResult(O().With("lowered", true))); // finishes on a later frame
                return lowered.Task;
            });
            bridge.RegisterTool("nested_task", "A value holding a Task.", null,
                args => O().With("pending", Task.FromResult(1)));
            bridge.RegisterTool("sound_horn", "Sound the horn.", null, args => Task.Run(() => { }));
            var keeper = Wait(queue, bridge.CreateSessionAsync(tools: new[] { "lower_bridge", "nested_task", "sound_horn" },
                model: Scripted(O().With("toolCalls", new List<object> {
                    O().With("name", "lower_bridge").With("arguments", O()),
                    O().With("name", "nested_task").With("arguments", O()),
                    O().With("name", "sound_horn").With("arguments", O()) }), O().With("text", "Done."))));
            var keeperResult = Wait(queue, keeper.RespondAsync("Let them in."));
            var taskOutputs = new Dictionary<string, JsonObject>();
            foreach (JsonObject call in keeperResult.GetArray("toolCalls"))
                taskOutputs[call.GetObject("call").GetString("name")] = call;
            Check(Json.Serialize(taskOutputs["lower_bridge"].Get("output")) == "{\"lowered\":true}"
                && !taskOutputs["lower_bridge"].GetBool("isError"), taskOutputs["lower_bridge"].ToString());
            Check(taskOutputs["nested_task"].GetBool("isError")
                && ("" + taskOutputs["nested_task"].Get("output")).Contains("Task"), taskOutputs["nested_task"].ToString());
            Check(!taskOutputs["sound_horn"].GetBool("isError") && !("" + Json.Serialize(taskOutputs["sound_horn"].Get("output"))).Contains("Status"),
                taskOutputs["sound_horn"].ToString());

            current = "streaming events";
            Check(texts.Count >= 2 && texts[texts.Count - 1] == result.GetString("text"), string.Join("|", texts.ToArray()));
            Check(eventTypes.Contains("modelStep") && eventTypes.Contains("toolCallCompleted"), string.Join(",", eventTypes.ToArray()));
            Check(eventsOnMain, "events ran off the main thread");

            current = "tool that throws";
            bridge.RegisterTool("ring_bell", "Ring the bell.", null, args => { throw new InvalidOperationException("the bell is cracked"); });
            bridge.RegisterTool("raise_flag", "Raise the flag.", null, args => ToolReply.Error("No flag left."));
            var bell = Wait(queue, bridge.CreateSessionAsync(tools: new[] { "ring_bell", "raise_flag" },
                model: Scripted(O().With("toolCalls", new List<object> {
                    O().With("name", "ring_bell").With("arguments", O()),
                    O().With("name", "raise_flag").With("arguments", O()) }), O().With("text", "Done."))));
            var toolErrors = new List<Exception>();
            var reportErrors = queue.OnError;
            queue.OnError = toolErrors.Add;
            result = Wait(queue, bell.RespondAsync("Alarm!"));
            queue.Pump();
            queue.OnError = reportErrors;
            // The developer gets the handler's exception with its stack; ToolReply.Error is an answer, not reported.
            var toolError = toolErrors.Count == 1 ? toolErrors[0] as OamToolException : null;
            Check(toolError != null && toolError.ToolName == "ring_bell" &&
                  toolError.Message == "Tool 'ring_bell' threw InvalidOperationException; the model got it as an error output." &&
                  toolError.InnerException is InvalidOperationException &&
                  toolError.InnerException.StackTrace != null,
                "tool exceptions reported: " + string.Join(" | ", toolErrors.ConvertAll(e => e.ToString()).ToArray()));
            var outputs = new Dictionary<string, JsonObject>();
            foreach (var item in result.GetArray("toolCalls"))
            {
                var r = (JsonObject)item;
                outputs[r.GetObject("call").GetString("name")] = r;
            }
            Check(outputs["ring_bell"].GetBool("isError") &&
                  (string)outputs["ring_bell"].Get("output") == "InvalidOperationException: the bell is cracked",
                outputs["ring_bell"].ToString());
            Check(outputs["raise_flag"].GetBool("isError") && (string)outputs["raise_flag"].Get("output") == "No flag left.",
                outputs["raise_flag"].ToString());

            current = "tool that never answers";
            var cancelled = new ManualResetEventSlim(false);
            int cancelThread = 0;
            bridge.RegisterTool("slow_gate", "Open slowly.", null, async (args, context) =>
            {
                context.CancellationToken.Register(() => cancelThread = Thread.CurrentThread.ManagedThreadId);
                try { await Task.Delay(Timeout.Infinite, context.CancellationToken); }
                catch (OperationCanceledException) { cancelled.Set(); throw; }
                return null;
            }, timeoutSeconds: 0.3);
            var slow = Wait(queue, bridge.CreateSessionAsync(tools: new[] { "slow_gate" },
                model: Scripted(O().With("toolCalls", new List<object> { O().With("name", "slow_gate").With("arguments", O()) }),
                    O().With("template", "{toolOutput}"))));
            result = Wait(queue, slow.RespondAsync("Open."));
            record = (JsonObject)result.GetArray("toolCalls")[0];
            Check(record.GetBool("isError") && ((string)record.Get("output")).Contains("timed out"), record.ToString());
            var cancelWatch = Stopwatch.StartNew();
            while (cancelThread == 0 && cancelWatch.ElapsedMilliseconds < 2000) { queue.Pump(); Thread.Sleep(1); }
            Check(cancelled.Wait(2000), "the handler's token was not cancelled");
            Check(cancelThread == mainThread, "the token's callbacks ran on thread " + cancelThread + ", not the main thread");

            current = "cancellation token";
            var lazy = Wait(queue, bridge.CreateSessionAsync(model: Scripted(O().With("text", "late").With("delayMs", 5000),
                O().With("text", "next"))));
            var source = new CancellationTokenSource(150);
            var error = WaitError(queue, lazy.RespondAsync("x", cancellationToken: source.Token));
            Check(error is OperationCanceledException, "expected OperationCanceledException, got " + error);
            var watch = Stopwatch.StartNew();
            result = Wait(queue, lazy.RespondAsync("y"));
            Check(result.GetString("text") == "next" && watch.ElapsedMilliseconds < 2500,
                "next turn after cancel: " + result + " in " + watch.ElapsedMilliseconds + " ms");

            current = "a long-lived token does not keep finished turns alive";
            var sceneToken = new CancellationTokenSource(); // like MonoBehaviour.destroyCancellationToken
            var quick = Wait(queue, bridge.CreateSessionAsync(model: Scripted(O().With("text", "a")).With("fallback", O().With("text", "b"))));
            var label1 = TurnWithLabel(queue, quick, sceneToken.Token);
            var label2 = TurnWithLabel(queue, quick, sceneToken.Token);
            // Mono scans stacks conservatively: a stale word may keep a finished turn's objects for a while. With
            // the leak they stay forever (the token holds them), so a few more turns and collections tell the two apart.
            for (var round = 0; round < 10 && (label1.IsAlive || label2.IsAlive); round++)
            {
                TurnWithLabel(queue, quick, CancellationToken.None);
                GC.Collect();
                GC.WaitForPendingFinalizers();
                GC.Collect();
            }
            Check(!label1.IsAlive && !label2.IsAlive, "the token still references finished turns' callbacks: " + label1.IsAlive + " " + label2.IsAlive);
            GC.KeepAlive(sceneToken);

            current = "timeout";
            var sleepy = Wait(queue, bridge.CreateSessionAsync(model: Scripted(O().With("text", "late").With("delayMs", 3000))));
            error = WaitError(queue, sleepy.RespondAsync("x", timeoutMs: 200));
            var bridgeError = error as OamBridgeException;
            Check(bridgeError != null && bridgeError.Code == -32024 &&
                  bridgeError.Message == "'session/respond' did not finish within 200 ms; it was cancelled.", "" + error);

            current = "typed errors";
            error = WaitError(queue, bridge.RequestAsync("session/respond", O().With("session", "nobody").With("prompt", "x")));
            bridgeError = error as OamBridgeException;
            Check(bridgeError != null && bridgeError.Code == -32020 && bridgeError.DataCode == "session_not_found", "" + error);
            bool threw = false;
            try { bridge.ToolDefinitions(new[] { "missing" }); } catch (ArgumentException) { threw = true; }
            Check(threw, "unknown tool name rejected");
        }
        finally
        {
            bridge.Dispose();
        }
    }

    static void TestGame()
    {
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        try
        {
            current = "npc talk with a world change";
            var world = Wait(queue, bridge.CreateWorldAsync(O().With("player", O().With("gold", 60)), "village"));
            var changes = new List<JsonObject>();
            string subscription = Wait(queue, world.SubscribeAsync("player", changes.Add));
            var npc = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Gorm").With("role", "the village blacksmith"),
                npc: "gorm", world: "village", options: O().With("worldWritable", new List<object> { "player" }),
                model: Scripted(
                    O().With("toolCalls", new List<object> { O().With("name", "update_world_state")
                        .With("arguments", O().With("path", "player.gold").With("value", "45")) }),
                    O().With("json", O().With("emotion", "proud").With("line", "That will be 15 gold.")
                        .With("player_options", new List<object> { "Thanks.", "Too much!", "Bye." })
                        .With("ends_conversation", false)))));
            var lines = new List<string>();
            var emotions = new List<string>();
            var result = Wait(queue, npc.TalkAsync("A sword, please.", onLine: lines.Add, onEmotion: emotions.Add));
            Check(result.GetString("line") == "That will be 15 gold." && result.GetString("emotion") == "proud", result.ToString());
            Check(lines.Count > 0 && lines[lines.Count - 1] == "That will be 15 gold.", string.Join("|", lines.ToArray()));
            Check(emotions.Count == 1 && emotions[0] == "proud", string.Join(",", emotions.ToArray()));
            Check(changes.Count == 1 && changes[0].GetString("path") == "player.gold" && changes[0].GetLong("oldValue") == 60 &&
                  changes[0].GetLong("newValue") == 45 && changes[0].GetString("subscription") == subscription,
                changes.Count > 0 ? changes[0].ToString() : "no change");
            Check((long)Wait(queue, world.GetAsync("player.gold")) == 45, "world value");

            current = "unsubscribe from inside a change callback, mid-turn";
            // An NPC writes three values in one turn; the game unsubscribes at the first change. The later
            // changes are already on their way: none reaches the callback once UnsubscribeAsync was called.
            var notes = Wait(queue, bridge.CreateWorldAsync(O(), "notes"));
            var seen = new List<string>();
            Task unsubscribing = null;
            string noteSubscription = null;
            noteSubscription = Wait(queue, notes.SubscribeAsync("", change =>
            {
                seen.Add(change.GetString("path"));
                if (seen.Count == 1) unsubscribing = notes.UnsubscribeAsync(noteSubscription);
            }));
            Func<string, JsonObject> write = path => O().With("name", "update_world_state")
                .With("arguments", O().With("path", path).With("value", "1"));
            var ned = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Ned"), npc: "ned", world: notes,
                options: O().With("worldWritable", new List<object> { "" }),
                model: Scripted(
                    O().With("toolCalls", new List<object> { write("x"), write("y") }),
                    O().With("toolCalls", new List<object> { write("z") }),
                    O().With("json", O().With("emotion", "neutral").With("line", "Done.")
                        .With("player_options", new List<object> { "a", "b", "c" }).With("ends_conversation", false)))));
            Wait(queue, ned.TalkAsync("Go."));
            Check(unsubscribing != null, "the callback ran");
            Wait(queue, unsubscribing);
            Check(seen.Count == 1 && seen[0] == "x", string.Join(",", seen.ToArray()));
            var notesState = Wait(queue, notes.SnapshotAsync());
            Check(notesState.GetLong("x") == 1 && notesState.GetLong("z") == 1, notesState.ToString());

            current = "npc bark, state, restore";
            var state = Wait(queue, npc.StateAsync());
            Check(state.GetLong("version") == 1, "" + state);
            var restored = Wait(queue, bridge.RestoreNpcAsync(state, "gorm2", Scripted(O().With("text", "[neutral] Back again?"))));
            Check(restored.Id == "gorm2", restored.Id);

            current = "world remove and delete, npc reset, session settings and compaction";
            var village = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Hilda"), world: world));
            Check(village.Id != null, "an OamWorld where a world id goes");
            var removed = Wait(queue, world.RemoveAsync("player.gold"));
            Check(removed.GetBool("removed") && removed.GetLong("oldValue") == 45, removed.ToString());
            Check(Wait(queue, world.GetAsync("player.gold")) == null, "removed value");
            Check(changes.Count == 2 && changes[1].Get("newValue") == null && !changes[1].ContainsKey("newValue"),
                changes.Count > 1 ? changes[1].ToString() : "no change for the removal");
            Wait(queue, npc.ResetAsync(clearMemory: true));
            var afterReset = Wait(queue, npc.StateAsync());
            Check(afterReset.GetObject("memory").GetLong("relationship", -1) == 0, afterReset.ToString());
            var scribe = Wait(queue, bridge.CreateSessionAsync("Be brief.", model: Scripted(
                O().With("text", "One."), O().With("text", "Two."), O().With("text", "They counted to two."))));
            Wait(queue, scribe.RespondAsync("Count."));
            Wait(queue, scribe.RespondAsync("Again."));
            Wait(queue, scribe.SetInstructionsAsync("Be verbose."));
            Wait(queue, scribe.SetContextNoteAsync("It is night."));
            var toolsSet = Wait(queue, scribe.SetToolsAsync(new string[0]));
            Check(toolsSet.GetString("session") == scribe.Id && toolsSet.GetArray("warnings") != null, toolsSet.ToString());
            Check(Wait(queue, scribe.CompactAsync(keepRecentTurns: 0)) == "They counted to two.", "summary");
            Wait(queue, scribe.SetContextNoteAsync(null));
            Wait(queue, scribe.SetInstructionsAsync(null));
            var listed = (JsonObject)Wait(queue, bridge.RequestAsync("session/list"));
            var entry = (JsonObject)listed.GetArray("sessions").Find(x => ((JsonObject)x).GetString("session") == scribe.Id);
            Check(entry != null && !entry.ContainsKey("instructions") && entry.GetLong("entries") == 0, "" + entry);
            var ended = Wait(queue, world.DeleteAsync());
            Check(ended.GetBool("deleted") && ended.GetLong("endedSubscriptions") == 1, ended.ToString());

            current = "decision";
            var decision = Wait(queue, bridge.DecideAsync("A wolf blocks the path.", new object[] { "fight", "flee" },
                model: Scripted(O().With("json", O().With("reasoning", "Too dangerous.").With("choice", "flee").With("confidence", 80)))));
            Check(decision.GetString("optionID") == "flee" && decision.GetLong("confidence") == 80, decision.ToString());

            current = "decision and content with a client tool, talk with a per-turn tool choice";
            int lookups = 0;
            bridge.RegisterTool("check_health", "The actor's health.", null, args => { lookups++; return O().With("hp", 3); });
            var cornered = Wait(queue, bridge.DecideAsync("A wolf blocks the path.", new object[] { "fight", "flee" },
                tools: new[] { "check_health" }, toolChoice: "required", instructions: "Decide as a coward.", temperature: 0.5,
                model: Scripted(O().With("toolCalls", new List<object> { O().With("name", "check_health").With("arguments", O()) }),
                    O().With("json", O().With("reasoning", "Only 3 hp.").With("choice", "flee").With("confidence", 90)))));
            Check(lookups == 1 && cornered.GetString("optionID") == "flee" && cornered.GetArray("toolCalls").Count == 1,
                cornered.ToString());
            var indexes = new List<long>();
            bridge.RegisterTool("count_wolves", "How many wolves.", null, (args, ctx) =>
            {
                indexes.Add(ctx.Index ?? -1);
                return Task.FromResult<object>(2);
            });
            var crowd = Wait(queue, bridge.DecideManyAsync(new object[] {
                    O().With("situation", "A wolf.").With("options", new List<object> { "fight", "flee" })
                        .With("tools", bridge.ToolDefinitions(new[] { "count_wolves" })).With("toolChoice", "required"),
                    O().With("situation", "Alone.").With("options", new List<object> { "wait" }) },
                maxConcurrency: 1, model: Scripted(
                    O().With("toolCalls", new List<object> { O().With("name", "count_wolves").With("arguments", O()) }),
                    O().With("json", O().With("reasoning", "Two wolves.").With("choice", "flee").With("confidence", 80)))));
            Check(crowd.Count == 2 && ((JsonObject)crowd[0]).GetString("optionID") == "flee"
                && ((JsonObject)crowd[1]).GetString("optionID") == "wait", Json.Serialize(crowd));
            Check(indexes.Count == 1 && indexes[0] == 0, "tool call index: " + string.Join(",", indexes.ConvertAll(i => "" + i).ToArray()));
            var asGorm = Wait(queue, bridge.DecideAsync("A wolf blocks the path.", new object[] { "fight", "flee" }, actor: npc,
                model: Scripted(O().With("json", O().With("reasoning", "A smith fights.").With("choice", "fight").With("confidence", 60)))));
            Check(asGorm.GetString("optionID") == "fight", "an OamNpc as the actor: " + asGorm);
            Check(Json.Serialize(O().With("npc", npc).With("world", world)) == "{\"npc\":\"gorm\",\"world\":\"village\"}",
                Json.Serialize(O().With("npc", npc).With("world", world)));
            var loot = Wait(queue, bridge.GenerateAsync("Loot for a weak player.", O().With("type", "object")
                .With("properties", O().With("item", O().With("type", "string"))).With("required", new List<object> { "item" }),
                tools: new[] { "check_health" }, model: Scripted(
                    O().With("toolCalls", new List<object> { O().With("name", "check_health").With("arguments", O()) }),
                    O().With("json", O().With("item", "Potion")))));
            Check(lookups == 2 && ((JsonObject)loot).GetString("item") == "Potion", "" + loot);
            var medic = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Medic"), tools: new[] { "check_health" },
                options: O().With("replyFormat", "text"), model: Scripted(O().With("text", "[worried] Rest a while."))));
            var advice = Wait(queue, medic.TalkAsync("How am I?", toolChoice: "none"));
            Check(lookups == 2 && advice.GetString("line") == "Rest a while.", advice.ToString());
            var refused = WaitError(queue, medic.TalkAsync("Again?", toolChoice: O().With("tool", "no_such_tool"))) as OamBridgeException;
            Check(refused != null && refused.Code == -32011, "a per-turn tool the NPC lacks: " + refused);

            current = "content";
            var content = Wait(queue, bridge.GenerateAsync("A sword.", O().With("type", "object")
                .With("properties", O().With("name", O().With("type", "string")))
                .With("required", new List<object> { "name" }), model: Scripted(O().With("json", O().With("name", "Iron Sword")))));
            Check(content is JsonObject && ((JsonObject)content).GetString("name") == "Iron Sword", "" + content);

            current = "decision and content stop waiting when their token is cancelled";
            var slowDecision = Scripted(O().With("json", O().With("reasoning", "Hmm.").With("choice", "fight")
                .With("confidence", 50)).With("delayMs", 5000));
            var source = new CancellationTokenSource(150);
            var error = WaitError(queue, bridge.DecideAsync("A wolf.", new object[] { "fight", "flee" }, model: slowDecision,
                cancellationToken: source.Token), 4000);
            Check(error is OperationCanceledException, "DecideAsync: expected OperationCanceledException, got " + error);
            source = new CancellationTokenSource(150);
            error = WaitError(queue, bridge.GenerateAsync("A sword.", O().With("type", "object"),
                model: Scripted(O().With("json", O()).With("delayMs", 5000)), cancellationToken: source.Token), 4000);
            Check(error is OperationCanceledException, "GenerateAsync: expected OperationCanceledException, got " + error);
            Check(PendingCount(bridge) == 0, "cancelled requests still wait for their responses: " + PendingCount(bridge));
            error = WaitError(queue, bridge.DecideAsync("A wolf.", new object[] { "fight" }, null, null, null, null,
                new CancellationToken(true)));
            Check(error is OperationCanceledException, "an already cancelled token: " + error);
            Check(Wait(queue, bridge.RequestAsync("ping")) is JsonObject, "the bridge still answers after the cancellations");

            current = "bark, save, update and session reset stop waiting when their token is cancelled";
            var everyStepSlow = O().With("type", "scripted").With("steps", new List<object>())
                .With("fallback", O().With("text", "[neutral] Hm.").With("delayMs", 60000));
            var snik = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Snik"), npc: "snik", model: everyStepSlow));
            var snikTalk = snik.TalkAsync("Hello?"); // holds the NPC's queue until it is cancelled below
            var sleeper = Wait(queue, bridge.CreateSessionAsync(model: everyStepSlow));
            var sleeperTurn = sleeper.RespondAsync("Wake up.");
            source = new CancellationTokenSource();
            var bark = snik.BarkAsync("Rain.", source.Token);
            var save = snik.StateAsync(source.Token);
            var update = snik.UpdateAsync(memory: O().With("relationship", 5), cancellationToken: source.Token);
            var reset = sleeper.ResetAsync(source.Token);
            source.Cancel();
            error = WaitError(queue, bark);
            Check(error is OperationCanceledException, "BarkAsync: expected OperationCanceledException, got " + error);
            error = WaitError(queue, save);
            Check(error is OperationCanceledException, "StateAsync: expected OperationCanceledException, got " + error);
            error = WaitError(queue, update);
            Check(error is OperationCanceledException, "UpdateAsync: expected OperationCanceledException, got " + error);
            error = WaitError(queue, reset);
            Check(error is OperationCanceledException, "ResetAsync: expected OperationCanceledException, got " + error);
            Check(PendingCount(bridge) == 2, "only the talk and the turn still wait: " + PendingCount(bridge));
            Wait(queue, snik.CancelAsync());
            Wait(queue, sleeper.CancelAsync());
            var talkError = WaitError(queue, snikTalk) as OamBridgeException;
            Check(talkError != null && talkError.Code == -32009, "the talk: " + talkError);
            Check(WaitError(queue, sleeperTurn) is OamBridgeException, "the turn");
            Check(PendingCount(bridge) == 0, "cancelled requests still wait for their responses: " + PendingCount(bridge));
        }
        finally
        {
            bridge.Dispose();
        }
    }

    // Pumps nothing until the bridge has answered every request: the events of those turns are then all in the
    // queue, as at a frame where the player walks away after the bridge sent the rest of the line.
    static void UntilAnswered(OamBridge bridge)
    {
        var watch = Stopwatch.StartNew();
        while (PendingCount(bridge) > 0)
        {
            if (watch.ElapsedMilliseconds > 15000) throw new TimeoutException("the bridge did not answer");
            Thread.Sleep(1);
        }
    }

    // A talker whose reply is text, streamed in pieces.
    static readonly JsonObject TextReplies = O().With("replyFormat", "text");

    static JsonObject Reply(string line)
    {
        return O().With("text", "[curious] " + line).With("chunks", 6); // a line in about six lineDeltas
    }

    static void TestWalkAway()
    {
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        try
        {
            current = "many NPCs talk at once; the player walks away from one mid-line";
            var npcs = new List<OamNpc>();
            for (int i = 0; i < 3; i++)
                npcs.Add(Wait(queue, bridge.CreateNpcAsync(O().With("name", "Villager " + i), options: TextReplies,
                    model: Scripted(Reply("Villager " + i + " has a long story about the old mill by the river.")))));
            var lines = new List<string>[] { new List<string>(), new List<string>(), new List<string>() };
            var walkAway = new CancellationTokenSource();
            var turns = new List<Task<JsonObject>>();
            for (int i = 0; i < 3; i++)
            {
                int n = i;
                turns.Add(npcs[i].TalkAsync("Tell me.", onLine: text =>
                {
                    lines[n].Add(text);
                    if (n == 1) walkAway.Cancel(); // the player walks away at the first words of villager 1
                }, cancellationToken: n == 1 ? walkAway.Token : CancellationToken.None));
            }
            UntilAnswered(bridge);
            queue.Pump();
            Check(lines[1].Count == 1, "villager 1 went on talking after the cancel: " + string.Join(" | ", lines[1].ToArray()));
            for (int i = 0; i < 3; i += 2)
            {
                var result = Wait(queue, turns[i]);
                Check(lines[i].Count > 1 && lines[i][lines[i].Count - 1] == result.GetString("line"),
                    "villager " + i + ": " + string.Join(" | ", lines[i].ToArray()));
            }
            // The turn had ended before the cancel: the call gives the reply (the NPC keeps that turn), or is cancelled.
            WaitError(queue, turns[1]);

            current = "the player walks away with npc.CancelAsync() mid-line: no more lines for that talk";
            var bram = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Bram"), options: TextReplies,
                model: Scripted(Reply("Bram has a long story about the old mill by the river and its miller."))));
            var bramLines = new List<string>();
            Task<JsonObject> cancel = null;
            var bramTurn = bram.TalkAsync("Tell me.", onLine: text =>
            {
                bramLines.Add(text);
                if (cancel == null) cancel = bram.CancelAsync(); // at the first words
            });
            UntilAnswered(bridge);
            queue.Pump();
            Check(bramLines.Count == 1, "Bram went on talking after CancelAsync: " + string.Join(" | ", bramLines.ToArray()));
            Wait(queue, cancel);
            WaitError(queue, bramTurn); // the reply when the talk had ended before the cancel, else -32009

            current = "the player walks away with session.CancelAsync() mid-answer: no more text for that turn";
            var guide = Wait(queue, bridge.CreateSessionAsync("You are a guide.",
                model: Scripted(O().With("text", "The road north passes the mill, the bridge and the old watchtower.")
                    .With("chunks", 6))));
            var texts = new List<string>();
            Task<JsonObject> stop = null;
            var answer = guide.RespondAsync("Which way?", onText: text =>
            {
                texts.Add(text);
                if (stop == null) stop = guide.CancelAsync();
            });
            UntilAnswered(bridge);
            queue.Pump();
            Check(texts.Count == 1, "the answer went on after CancelAsync: " + string.Join(" | ", texts.ToArray()));
            Wait(queue, stop);
            WaitError(queue, answer);

            current = "the NPC is killed with npc.DeleteAsync() mid-line: no more lines for that talk";
            var cole = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Cole"), options: TextReplies,
                model: Scripted(Reply("Cole has a long story about the old mill by the river and its miller.")
                    .With("delayMs", 20))));
            var coleLines = new List<string>();
            Task<JsonObject> deleted = null;
            var coleTurn = cole.TalkAsync("Tell me.", onLine: text =>
            {
                coleLines.Add(text);
                if (deleted == null) deleted = cole.DeleteAsync(); // at the first words
            });
            UntilAnswered(bridge);
            queue.Pump();
            Check(coleLines.Count == 1, "Cole went on talking after DeleteAsync: " + string.Join(" | ", coleLines.ToArray()));
            Wait(queue, deleted);
            WaitError(queue, coleTurn); // the reply when the talk had ended before the delete, else -32009

            current = "the session is deleted with session.DeleteAsync() mid-answer: no more text for that turn";
            var tour = Wait(queue, bridge.CreateSessionAsync("You are a guide.",
                model: Scripted(O().With("text", "The road north passes the mill, the bridge and the old watchtower.")
                    .With("chunks", 6).With("delayMs", 20))));
            var tourTexts = new List<string>();
            Task<JsonObject> ended = null;
            var tourAnswer = tour.RespondAsync("Which way?", onText: text =>
            {
                tourTexts.Add(text);
                if (ended == null) ended = tour.DeleteAsync();
            });
            UntilAnswered(bridge);
            queue.Pump();
            Check(tourTexts.Count == 1, "the answer went on after DeleteAsync: " + string.Join(" | ", tourTexts.ToArray()));
            Wait(queue, ended);
            WaitError(queue, tourAnswer);

            current = "a talk sent by hand (RequestAsync with anonymous params) stops its events at npc.CancelAsync()";
            var dell = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Dell"), npc: "dell", options: TextReplies,
                model: Scripted(Reply("Dell has a long story about the old mill by the river and its miller."))));
            var raw = new List<string>();
            Task<JsonObject> rawCancel = null;
            var rawTurn = bridge.RequestAsync("npc/talk", new { npc = "dell", line = "Tell me.", stream = true }, e =>
            {
                if (e.GetString("type") != "lineDelta") return;
                raw.Add(e.GetString("delta"));
                if (rawCancel == null) rawCancel = dell.CancelAsync();
            });
            UntilAnswered(bridge);
            queue.Pump();
            Check(raw.Count == 1, "the talk sent by hand went on after CancelAsync: " + string.Join(" | ", raw.ToArray()));
            Wait(queue, rawCancel);
            WaitError(queue, rawTurn);

            current = "a talk sent by hand with the NPC's handle as its id stops its events at npc.CancelAsync()";
            var emma = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Emma"), options: TextReplies,
                model: Scripted(Reply("Emma has a long story about the old mill by the river and its miller."))));
            var byHandle = new List<string>();
            Task<JsonObject> handleCancel = null;
            var handleTurn = bridge.RequestAsync("npc/talk", O().With("npc", emma).With("line", "Tell me.")
                .With("stream", true), e =>
            {
                if (e.GetString("type") != "lineDelta") return;
                byHandle.Add(e.GetString("delta"));
                if (handleCancel == null) handleCancel = emma.CancelAsync();
            });
            UntilAnswered(bridge);
            queue.Pump();
            Check(byHandle.Count == 1, "the talk sent with a handle went on after CancelAsync: " +
                string.Join(" | ", byHandle.ToArray()));
            Wait(queue, handleCancel);
            WaitError(queue, handleTurn);

            current = "a talk that npc.DeleteAsync() cancelled fails with -32009 cancelled";
            var sleeper2 = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Nod"), options: TextReplies,
                model: Scripted(O().With("text", "[calm] Zzz.").With("delayMs", 60000))));
            var sleeping = sleeper2.TalkAsync("Wake up.");
            Wait(queue, sleeper2.DeleteAsync());
            var why = WaitError(queue, sleeping) as OamBridgeException;
            Check(why != null && why.Code == -32009, "the deleted NPC's talk ended with: " + (why == null ? "no error" : why.Message));
            // It says why, as the typed client's does.
            Check(why != null && Regex.IsMatch(why.Message, "^The (turn|request) was cancelled[^.]*\\. 'npc/talk' was "
                + "cancelled with the rest of NPC '[^']+''s work when npc\\.DeleteAsync\\(\\) deleted the NPC\\.$"),
                "the deleted NPC's talk does not say why: " + (why == null ? "no error" : why.Message));

            current = "a turn that session.DeleteAsync() cancelled says so";
            var idle = Wait(queue, bridge.CreateSessionAsync("You are a guide.", session: "idle",
                model: Scripted(O().With("text", "Zzz.").With("delayMs", 60000))));
            var idleAnswer = idle.RespondAsync("Which way?");
            Wait(queue, idle.DeleteAsync()); // the level ends while the guide answers
            var idleWhy = WaitError(queue, idleAnswer) as OamBridgeException;
            Check(idleWhy != null && idleWhy.Code == -32009 && Regex.IsMatch(idleWhy.Message, "^The (turn|request) was "
                + "cancelled[^.]*\\. 'session/respond' was cancelled with the rest of session 'idle''s work when "
                + "session\\.DeleteAsync\\(\\) deleted the session\\.$"),
                "the deleted session's turn ended with: " + (idleWhy == null ? "no error" : idleWhy.Message));

            foreach (string method in new[] { "npc/delete", "npc/cancel" })
            {
                current = "an " + method + " sent by hand (RequestAsync) in onLine: no more lines, as with the method";
                string fenId = method == "npc/delete" ? "fen" : "fen2";
                var fen = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Fen"), npc: fenId, options: TextReplies,
                    model: Scripted(Reply("Fen has a long story about the old mill by the river and its miller.")
                        .With("delayMs", 20))));
                var fenLines = new List<string>();
                Task<object> byHand = null;
                var fenTurn = fen.TalkAsync("Tell me.", onLine: text =>
                {
                    fenLines.Add(text);
                    if (byHand == null) byHand = bridge.RequestAsync(method, new { npc = fenId }); // at the first words
                });
                UntilAnswered(bridge);
                queue.Pump();
                Check(fenLines.Count == 1, "Fen went on talking after a hand-sent " + method + ": "
                    + string.Join(" | ", fenLines.ToArray()));
                Wait(queue, byHand);
                WaitError(queue, fenTurn);
            }

            foreach (string method in new[] { "npc/cancel", "npc/delete" })
            {
                current = "an " + method + " sent as a notification (Notify) in onLine: no more lines, as with the method";
                string fernId = method == "npc/delete" ? "fern" : "fern2";
                var fern = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Fern"), npc: fernId, options: TextReplies,
                    model: Scripted(Reply("Fern has a long story about the old mill by the river and its miller.")
                        .With("delayMs", 20))));
                var fernLines = new List<string>();
                bool notified = false;
                var fernTurn = fern.TalkAsync("Tell me.", onLine: text =>
                {
                    fernLines.Add(text);
                    if (!notified) { notified = true; bridge.Notify(method, new { npc = fernId }); } // at the first words
                });
                UntilAnswered(bridge);
                queue.Pump();
                Check(fernLines.Count == 1, "Fern went on talking after a " + method + " notification: "
                    + string.Join(" | ", fernLines.ToArray()));
                WaitError(queue, fernTurn);
            }

            current = "a talk that an npc/delete notification cancelled says so";
            var doze = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Doze"), npc: "doze", options: TextReplies,
                model: Scripted(O().With("text", "[calm] Zzz.").With("delayMs", 60000))));
            var dozing = doze.TalkAsync("Wake up.");
            bridge.Notify("npc/delete", O().With("npc", "doze"));
            var dozeWhy = WaitError(queue, dozing) as OamBridgeException;
            Check(dozeWhy != null && dozeWhy.Code == -32009 && Regex.IsMatch(dozeWhy.Message, "^The (turn|request) was "
                + "cancelled[^.]*\\. 'npc/talk' was cancelled with the rest of NPC 'doze''s work when an 'npc/delete' "
                + "notification deleted the NPC\\.$"), "the talk ended with: " + (dozeWhy == null ? "no error" : dozeWhy.Message));

            current = "a session/cancel sent by hand (RequestAsync) in onText: no more text, as with CancelAsync";
            var walk = Wait(queue, bridge.CreateSessionAsync("You are a guide.", session: "walk",
                model: Scripted(O().With("text", "The road north passes the mill, the bridge and the old watchtower.")
                    .With("chunks", 6).With("delayMs", 20))));
            var walkTexts = new List<string>();
            Task<object> walkCancel = null;
            var walkAnswer = walk.RespondAsync("Which way?", onText: text =>
            {
                walkTexts.Add(text);
                if (walkCancel == null) walkCancel = bridge.RequestAsync("session/cancel", O().With("session", "walk"));
            });
            UntilAnswered(bridge);
            queue.Pump();
            Check(walkTexts.Count == 1, "the answer went on after a hand-sent session/cancel: "
                + string.Join(" | ", walkTexts.ToArray()));
            Wait(queue, walkCancel);
            WaitError(queue, walkAnswer);

            current = "a talk that an npc/delete sent by hand cancelled says so";
            var nap = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Nap"), npc: "nap", options: TextReplies,
                model: Scripted(O().With("text", "[calm] Zzz.").With("delayMs", 60000))));
            var napping = nap.TalkAsync("Wake up.");
            Wait(queue, bridge.RequestAsync("npc/delete", O().With("npc", "nap")));
            var napWhy = WaitError(queue, napping) as OamBridgeException;
            Check(napWhy != null && napWhy.Code == -32009 && napWhy.DataCode == "cancelled" && Regex.IsMatch(
                napWhy.Message, "^The (turn|request) was cancelled[^.]*\\. 'npc/talk' was cancelled with the rest of "
                + "NPC 'nap''s work when an 'npc/delete' request deleted the NPC\\.$"),
                "the talk ended with: " + (napWhy == null ? "no error" : napWhy.Message));

            // A talk given up through its token or its timeout sends npc/cancel, which cancels the NPC's other requests
            // with it (the protocol has no cancel for one request): their -32009 says so, as the other clients' do.
            const string givenUp = ": the protocol cancels the running turn and every request queued behind it "
                + "together (there is no cancel for one request). Send it again if you still need it.";
            current = "a talk whose token is cancelled: the talk and the save queued behind it say why they were cancelled";
            var ash = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Ash"), npc: "ash", options: TextReplies,
                model: Scripted(O().With("text", "[calm] Zzz.").With("delayMs", 60000))));
            var walkedAway = new CancellationTokenSource();
            var ashTalk = ash.TalkAsync("Wake up.", cancellationToken: walkedAway.Token);
            var ashNext = ash.TalkAsync("Are you there?");
            var ashSave = ash.StateAsync();
            walkedAway.Cancel(); // the player walks away
            Check(WaitError(queue, ashTalk) is OperationCanceledException, "the given-up talk");
            foreach (var sibling in new[] { Tuple.Create("npc/talk", WaitError(queue, ashNext)),
                Tuple.Create("npc/state", WaitError(queue, ashSave)) })
            {
                var siblingError = sibling.Item2 as OamBridgeException;
                Check(siblingError != null && siblingError.Code == -32009 && siblingError.Message.EndsWith(" '"
                    + sibling.Item1 + "' was cancelled with the rest of NPC 'ash''s work when the CancellationToken of "
                    + "its 'npc/talk' was cancelled" + givenUp),
                    "the " + sibling.Item1 + " queued behind it ended with: " + (sibling.Item2 == null ? "no error" : sibling.Item2.Message));
            }

            current = "a turn whose timeoutMs passes: the turn queued behind it says why it was cancelled";
            var dusk = Wait(queue, bridge.CreateSessionAsync("You are a guide.", session: "dusk",
                model: Scripted(O().With("text", "Zzz.").With("delayMs", 60000))));
            var duskTurn = dusk.RespondAsync("Which way?", timeoutMs: 300);
            var duskNext = dusk.RespondAsync("Hello?");
            var duskTimeout = WaitError(queue, duskTurn) as OamBridgeException;
            Check(duskTimeout != null && duskTimeout.Code == OamBridgeException.Timeout, "the turn: " + duskTimeout);
            var duskWhy = WaitError(queue, duskNext) as OamBridgeException;
            Check(duskWhy != null && duskWhy.Code == -32009 && duskWhy.Message.EndsWith(" 'session/respond' was cancelled "
                + "with the rest of session 'dusk''s work when its 'session/respond' timed out after 300 ms (timeoutMs)"
                + givenUp), "the turn queued behind it ended with: " + (duskWhy == null ? "no error" : duskWhy.Message));

            current = "a tool handler's save of its own NPC, cancelled with the talk whose token was cancelled, says why";
            OamNpc keeper = null;
            Task<JsonObject> keeperSave = null;
            bridge.RegisterTool("check_ledger", "Look in the ledger.", null, (args, context) =>
            {
                keeperSave = keeper.StateAsync(); // queued behind the talk that called the tool
                var never = new TaskCompletionSource<object>();
                context.CancellationToken.Register(() => never.TrySetCanceled());
                return never.Task;
            });
            keeper = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Keeper"), npc: "keeper", tools: new[] { "check_ledger" },
                options: TextReplies, model: Scripted(O().With("toolCalls", new List<object> {
                    O().With("name", "check_ledger").With("arguments", O()) }), O().With("text", "[calm] All paid."))));
            var closedShop = new CancellationTokenSource();
            var keeperTalk = keeper.TalkAsync("Did I pay?", cancellationToken: closedShop.Token);
            var inTool = Stopwatch.StartNew();
            while (keeperSave == null && inTool.ElapsedMilliseconds < 15000) { queue.Pump(); Thread.Sleep(1); }
            Check(keeperSave != null, "the tool was not called");
            closedShop.Cancel();
            Check(WaitError(queue, keeperTalk) is OperationCanceledException, "the given-up talk");
            var keeperWhy = keeperSave == null ? null : WaitError(queue, keeperSave) as OamBridgeException;
            Check(keeperWhy != null && keeperWhy.Code == -32009 && keeperWhy.Message.EndsWith(" 'npc/state' was cancelled "
                + "with the rest of NPC 'keeper''s work when the CancellationToken of its 'npc/talk' was cancelled" + givenUp),
                "the tool's save ended with: " + (keeperWhy == null ? "no error" : keeperWhy.Message));

            current = "an onLine callback that throws gets no more lines; the turn ends";
            var errors = new List<Exception>();
            var report = queue.OnError;
            queue.OnError = errors.Add;
            int calls = 0;
            var broken = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Mara"), options: TextReplies,
                model: Scripted(Reply("The label this line goes to was destroyed with its scene."))));
            var talk = broken.TalkAsync("Hi.", onLine: text => { calls++; throw new NullReferenceException("label"); });
            UntilAnswered(bridge);
            var error = WaitError(queue, talk);
            queue.OnError = report;
            Check(error == null, "the turn failed: " + error);
            Check(calls == 1 && errors.Count == 1 && errors[0] is NullReferenceException,
                calls + " calls, reported: " + string.Join(" | ", errors.ConvertAll(e => e.Message).ToArray()));
        }
        finally
        {
            bridge.Dispose();
        }
    }

    static void TestNoCallbackAfterDispose()
    {
        current = "no world change reaches the game after Dispose (the scene unloads)";
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        var seen = new List<string>();
        try
        {
            var world = Wait(queue, bridge.CreateWorldAsync(O().With("gold", 1)));
            Wait(queue, world.SubscribeAsync("", change => seen.Add(change.GetString("path"))));
            // Two changes whose world/changed lines are read (their responses came after them), not yet pumped.
            var set = world.SetAsync("gold", 2);
            var merge = world.MergeAsync(O().With("silver", 3));
            UntilAnswered(bridge);
            GC.KeepAlive(set);
            GC.KeepAlive(merge);
        }
        finally
        {
            bridge.Dispose();
        }
        queue.Pump(); // OamBridgeBehaviour pumps once after Dispose, to fail the waiting calls
        Check(seen.Count == 0, "world changes reached the game after Dispose: " + string.Join(",", seen.ToArray()));


        current = "no tool handler runs after Dispose";
        queue = new OamMainThreadQueue();
        bridge = Start(queue);
        int opened = 0;
        try
        {
            bridge.RegisterTool("open_gate", "Open a named gate.", GateSchema, args => { opened++; return "opened"; });
            var guard = Wait(queue, bridge.CreateSessionAsync(tools: new[] { "open_gate" },
                model: Scripted(GateStep("north"), O().With("text", "Done."))));
            var turn = guard.RespondAsync("Open it.");
            // The tool/call is read and queued for the main thread; the scene unloads before the next frame.
            var watch = Stopwatch.StartNew();
            var calls = (System.Collections.ICollection)typeof(OamBridge).GetField("toolCalls",
                System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Instance).GetValue(bridge);
            while (calls.Count == 0)
            {
                if (watch.ElapsedMilliseconds > 15000) throw new TimeoutException("no tool/call");
                Thread.Sleep(1);
            }
            GC.KeepAlive(turn);
        }
        finally
        {
            bridge.Dispose();
        }
        queue.Pump();
        Check(opened == 0, "the tool handler ran after Dispose");
    }

    static int PendingCount(OamBridge bridge)
    {
        var field = typeof(OamBridge).GetField("pending",
            System.Reflection.BindingFlags.NonPublic | System.Reflection.BindingFlags.Instance);
        return ((System.Collections.ICollection)field.GetValue(bridge)).Count;
    }

    static bool ProcessExists(int pid)
    {
        try
        {
            using (var p = Process.GetProcessById(pid)) return !p.HasExited;
        }
        catch (ArgumentException)
        {
            return false;
        }
        catch (InvalidOperationException)
        {
            return false;
        }
    }

    static void TestLifecycle()
    {
        current = "bridge dies mid-turn";
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        try
        {
            var doomed = Wait(queue, bridge.CreateSessionAsync(model: Scripted(O().With("text", "never").With("delayMs", 20000))));
            var turn = doomed.RespondAsync("x");
            Thread.Sleep(100);
            using (var p = Process.GetProcessById(bridge.ProcessId)) p.Kill();
            var error = WaitError(queue, turn, 5000) as OamBridgeException;
            Check(error != null && error.Code == -32023 && error.Message.StartsWith("The bridge process exited"), "" + error);
            if (Environment.OSVersion.Platform == PlatformID.Unix) // as the C and Python clients say it
                Check(error != null && error.Message.Contains("(signal 9)"), "the kill is named: " + error);
            var again = WaitError(queue, bridge.RequestAsync("ping"), 2000) as OamBridgeException;
            Check(again != null && again.DataCode == "shut_down", "" + again);
        }
        finally
        {
            bridge.Dispose();
        }

        current = "bridge exits with a status mid-request";
        bridge = new OamBridge(new[] { "sh", "-c", "read line; exit 3" }, queue);
        bridge.Start();
        try
        {
            var error = WaitError(queue, bridge.RequestAsync("ping"), 5000) as OamBridgeException;
            Check(error != null && error.Message == "The bridge process exited (exit status 3) before answering.", "" + error);
        }
        finally
        {
            bridge.Dispose();
        }

        current = "a bridge that exits by itself says why: its last stderr lines";
        bridge = new OamBridge(new[] { "sh", "-c", "echo starting >&2; echo 'Error: no model.' >&2; read line; exit 2" }, queue);
        bridge.LogReceived += line => { };
        bridge.Start();
        try
        {
            var error = WaitError(queue, bridge.RequestAsync("ping"), 5000) as OamBridgeException;
            Check(error != null && error.Message == "The bridge process exited (exit status 2) before answering. Its last "
                + "lines on stderr:\nstarting\nError: no model.", "" + error);
        }
        finally
        {
            bridge.Dispose();
        }

        current = "a bridge started with a bad flag says so (its stderr line), in the error and in Exited";
        string fromEnv = Environment.GetEnvironmentVariable("OAM_BRIDGE_COMMAND");
        var badFlag = new List<string>(string.IsNullOrEmpty(fromEnv)
            ? new[] { Environment.GetEnvironmentVariable("OAM_BRIDGE_PATH"), "stdio" }
            : fromEnv.Split(new[] { ' ' }, StringSplitOptions.RemoveEmptyEntries));
        badFlag.Add("--bogus");
        bridge = new OamBridge(badFlag.ToArray(), queue);
        var badFlagExits = new List<string>();
        bridge.Exited += e => badFlagExits.Add(e.Message);
        bridge.LogReceived += line => { };
        bridge.Start();
        try
        {
            var error = WaitError(queue, bridge.RequestAsync("ping"), 15000) as OamBridgeException;
            Check(error != null && error.Message.StartsWith("The bridge process exited (exit status 2) before answering. "
                + "Its last lines on stderr:\nError: Unknown option '--bogus'."), "" + error);
            queue.Pump();
            Check(badFlagExits.Count == 1 && badFlagExits[0] == (error == null ? null : error.Message),
                "Exited: " + string.Join(" | ", badFlagExits.ToArray()));
        }
        finally
        {
            bridge.Dispose();
        }

        current = "a bridge that dies while idle is reported (Exited)";
        bridge = Start(queue);
        var exits = new List<string>();
        var exitThreads = new List<int>();
        bridge.Exited += e =>
        {
            exitThreads.Add(Thread.CurrentThread.ManagedThreadId);
            exits.Add(e.Code + " " + e.Message);
        };
        try
        {
            using (var p = Process.GetProcessById(bridge.ProcessId)) p.Kill();
            var exitWatch = Stopwatch.StartNew(); // a hang guard, not a bound
            while (exits.Count == 0 && exitWatch.ElapsedMilliseconds < 10000) { queue.Pump(); Thread.Sleep(1); }
            Check(exits.Count == 1 && exits[0].StartsWith("-32023 The bridge process exited ("),
                "Exited: " + string.Join(" | ", exits.ToArray()));
            Check(exitThreads.TrueForAll(id => id == mainThread), "Exited ran on the dispatcher (the main thread)");
        }
        finally
        {
            bridge.Dispose();
        }
        queue.Pump();
        Check(exits.Count == 1, "Exited once: " + exits.Count);

        current = "dispose ends the bridge";
        queue = new OamMainThreadQueue();
        bridge = Start(queue);
        int pid = bridge.ProcessId;
        bool exitedAfterDispose = false;
        bridge.Exited += e => exitedAfterDispose = true;
        var busy = Wait(queue, bridge.CreateSessionAsync(model: Scripted(O().With("text", "never").With("delayMs", 20000))));
        var running = busy.RespondAsync("x");
        var watch = Stopwatch.StartNew();
        bridge.Dispose();
        Check(watch.ElapsedMilliseconds < 4000, "dispose took " + watch.ElapsedMilliseconds + " ms");
        Check(!ProcessExists(pid), "the bridge process still runs");
        var failed = WaitError(queue, running, 3000) as OamBridgeException;
        Check(failed != null && failed.Code == -32023 && failed.Message == "The bridge was closed.", "" + failed);
        queue.Pump();
        Check(!exitedAfterDispose, "Exited is for a bridge that ended by itself, not after Dispose");

        current = "use after dispose";
        Check(Safe(() => bridge.HasExited) == "True", "HasExited after Dispose: " + Safe(() => bridge.HasExited));
        Check(Safe(() => bridge.ProcessId) == pid.ToString(), "ProcessId after Dispose: " + Safe(() => bridge.ProcessId));
        var late = WaitError(queue, busy.RespondAsync("y"), 2000) as OamBridgeException;
        Check(late != null && late.Code == -32023 && late.Message == "The bridge was closed.", "" + late);
        Exception restart = null;
        try { bridge.Start(); } catch (Exception e) { restart = e; }
        Check(restart is ObjectDisposedException, "Start after Dispose: " + restart);

        current = "bridge log lines on the main thread";
        var logQueue = new OamMainThreadQueue();
        var callbackErrors = new List<Exception>();
        logQueue.OnError = callbackErrors.Add;
        var argv = new List<string>(OamBridge.ResolveCommand(null)) { "--log-level", "nope" }; // a usage error on stderr
        var chatty = new OamBridge(argv.ToArray(), logQueue);
        var logThreads = new List<int>();
        chatty.LogReceived += line =>
        {
            logThreads.Add(Thread.CurrentThread.ManagedThreadId);
            throw new InvalidOperationException("the log panel is gone"); // must not take the game down
        };
        chatty.Start();
        var exited = WaitError(logQueue, chatty.InitializeAsync("tests"), 10000) as OamBridgeException;
        Check(exited != null && exited.DataCode == "shut_down", "" + exited);
        var logWatch = Stopwatch.StartNew();
        while (logThreads.Count == 0 && logWatch.ElapsedMilliseconds < 5000) { logQueue.Pump(); Thread.Sleep(1); }
        Check(logThreads.Count > 0 && logThreads.TrueForAll(id => id == mainThread),
            "LogReceived ran on threads " + string.Join(",", logThreads.ConvertAll(id => id.ToString()).ToArray()));
        Check(callbackErrors.Count > 0 && callbackErrors[0].Message == "the log panel is gone",
            "the handler's exception goes to OnError: " + callbackErrors.Count);
        chatty.Dispose();

        current = "the bridge is started with OAM_EXIT_WITH_PARENT=1";
        if (System.IO.File.Exists("/proc/self/environ"))
        {
            Check(BridgeEnvironmentValue(OamBridge.ExitWithParentVariable) == "1",
                "OAM_EXIT_WITH_PARENT is " + BridgeEnvironmentValue(OamBridge.ExitWithParentVariable));
            current = "OAM_EXIT_WITH_PARENT set by the game is kept";
            Environment.SetEnvironmentVariable(OamBridge.ExitWithParentVariable, "0");
            try
            {
                string kept = BridgeEnvironmentValue(OamBridge.ExitWithParentVariable);
                Check(kept == "0", "OAM_EXIT_WITH_PARENT is " + kept);
            }
            finally
            {
                Environment.SetEnvironmentVariable(OamBridge.ExitWithParentVariable, null);
            }
        }

        current = "missing executable";
        var missing = new OamBridge(new[] { "/nonexistent/oam-bridge", "stdio" });
        OamBridgeException startError = null;
        try { missing.Start(); } catch (OamBridgeException e) { startError = e; }
        Check(startError != null && startError.DataCode == "shut_down", "" + startError);
        Check(startError != null && startError.Message.Contains("OAM_BRIDGE_COMMAND"), "the error says how to point at the bridge: " + startError);
        Check(startError != null && startError.Message.StartsWith(
                "Cannot start the bridge '/nonexistent/oam-bridge stdio': there is no file '/nonexistent/oam-bridge'.",
                StringComparison.Ordinal),
            "the error names the missing file first: " + startError);
        Check(startError != null && startError.Message.Contains("Bridge Path"), "the error names the behaviour's field: " + startError);

        current = "deno (or oam) not on PATH";
        // OAM_BRIDGE_COMMAND="deno run -A …/cli.ts stdio" in a terminal, then the editor started from the Dock or Hub.
        OamBridgeException pathError = null;
        try { new OamBridge(new[] { "no-such-deno-here", "run", "-A", "cli.ts", "stdio" }).Start(); }
        catch (OamBridgeException e) { pathError = e; }
        Check(pathError != null && pathError.Message.StartsWith("Cannot start the bridge 'no-such-deno-here run -A cli.ts stdio': "
                + "'no-such-deno-here' is not on the PATH of this process.", StringComparison.Ordinal)
              && pathError.Message.Contains("Unity Hub") && pathError.Message.Contains("full path"),
            "the error says the program is not on PATH and to give its full path: " + pathError);

        current = "requests after a failed start";
        var requestError = WaitError(queue, missing.CreateSessionAsync("x"), 2000) as OamBridgeException;
        Check(requestError != null && requestError.DataCode == "shut_down" && startError != null &&
              requestError.Message == startError.Message, "" + requestError);
        missing.Dispose();
    }

    /// The value of `name` in the environment of a freshly started bridge (Linux /proc), or "(unset)".
    static string BridgeEnvironmentValue(string name)
    {
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        try
        {
            string environ = System.IO.File.ReadAllText("/proc/" + bridge.ProcessId + "/environ");
            foreach (string entry in environ.Split('\0'))
                if (entry.StartsWith(name + "=", StringComparison.Ordinal)) return entry.Substring(name.Length + 1);
            return "(unset)";
        }
        finally
        {
            bridge.Dispose();
        }
    }

    static void Signal(int pid, string signal)
    {
        using (var kill = Process.Start(new ProcessStartInfo("kill", "-" + signal + " " + pid) { UseShellExecute = false }))
            kill.WaitForExit();
    }

    // Sends requests far past the 64 KiB of a pipe the bridge does not read, from a thread of its own (the game's
    // main thread in Unity): each RequestAsync must return its Task at once. Returns the Tasks, or null when the
    // sends blocked (the hang guard is far above what four sends take).
    static List<Task<object>> SendPastAFullPipe(OamBridge bridge)
    {
        var sent = new List<Task<object>>();
        var sender = new Thread(() =>
        {
            string padding = new string('x', 100000);
            for (int i = 0; i < 4; i++)
            {
                var task = bridge.RequestAsync("ping", O().With("padding", padding));
                lock (sent) sent.Add(task);
            }
            bridge.Notify("session/cancel", O().With("session", "s")); // a notification does not block either
        }) { IsBackground = true };
        sender.Start();
        bool returned = sender.Join(10000);
        Check(returned, "RequestAsync blocked the caller on the full input pipe (" + sent.Count + " of 4 sent)");
        return returned ? sent : null;
    }

    // A bridge that stopped reading (frozen: SIGSTOP here) while the game's requests filled its input pipe.
    static void TestDisposeFrozenBridge()
    {
        current = "dispose of a frozen bridge whose input is full";
        if (Environment.OSVersion.Platform != PlatformID.Unix) return;
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        int pid = bridge.ProcessId;
        Signal(pid, "STOP");
        try
        {
            var sent = SendPastAFullPipe(bridge);
            var disposer = new Thread(() => bridge.Dispose()) { IsBackground = true };
            disposer.Start();
            // A hang guard, far above the ~3 s grace period and the kill: Dispose used to wait here for ever.
            Check(disposer.Join(30000), "Dispose did not return");
            Check(!ProcessExists(pid), "the frozen bridge still exists");
            if (sent != null)
            {
                var error = WaitError(queue, sent[sent.Count - 1], 5000) as OamBridgeException;
                Check(error != null && error.Message == "The bridge was closed.", "the last request: " + error);
            }
        }
        finally
        {
            if (ProcessExists(pid)) Signal(pid, "KILL");
        }

        current = "requests to a bridge that never reads its input";
        // Not a bridge: `sleep` never reads its stdin and writes nothing.
        bridge = new OamBridge(new[] { "sleep", "600" }, queue);
        bridge.Start();
        pid = bridge.ProcessId;
        try
        {
            var sent = SendPastAFullPipe(bridge);
            var disposer = new Thread(() => bridge.Dispose()) { IsBackground = true };
            disposer.Start();
            Check(disposer.Join(20000), "Dispose did not return");
            Check(!ProcessExists(pid), "the process that does not read still exists");
            if (sent != null)
            {
                foreach (var task in sent)
                {
                    var error = WaitError(queue, task, 5000) as OamBridgeException;
                    Check(error != null && error.Code == -32023 && error.Message == "The bridge was closed.", "" + error);
                }
            }
        }
        finally
        {
            if (ProcessExists(pid)) Signal(pid, "KILL");
        }
    }

    // Dispose waits for a bridge that is still answering (it may be finishing cancelled work) but not for one that
    // answers nothing after the shutdown (frozen): that one is killed at once instead of after the grace period.
    static void TestDisposeWaitsOnlyForALiveBridge()
    {
        current = "dispose of a frozen bridge does not wait out the grace period";
        if (Environment.OSVersion.Platform != PlatformID.Unix) return;
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        bridge.ShutdownGraceMs = 60000; // far above the hang guard below: waiting it out fails the check
        int pid = bridge.ProcessId;
        Signal(pid, "STOP");
        try
        {
            var watch = Stopwatch.StartNew();
            var disposer = new Thread(() => bridge.Dispose()) { IsBackground = true };
            disposer.Start();
            Check(disposer.Join(20000), "Dispose waited for a frozen bridge (grace period 60 s)");
            Console.WriteLine("dispose of a frozen bridge: " + watch.ElapsedMilliseconds + " ms");
            Check(!ProcessExists(pid), "the frozen bridge still exists");
        }
        finally
        {
            if (ProcessExists(pid)) Signal(pid, "KILL");
        }

        current = "dispose waits for a bridge that answers but exits late";
        // Answers every line, and exits normally 1.5 s after its input ends (leaving a mark): not killed.
        string mark = System.IO.Path.Combine(System.IO.Path.GetTempPath(), "oam-late-exit-" + Guid.NewGuid().ToString("N"));
        var slow = new OamBridge(new[] { "sh", "-c",
            "while IFS= read -r line; do echo '{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}'; done; " +
            "sleep 1.5; echo done > \"$0\"", mark }, queue);
        slow.Start();
        try
        {
            var slowDisposer = new Thread(() => slow.Dispose()) { IsBackground = true };
            slowDisposer.Start();
            Check(slowDisposer.Join(20000), "Dispose did not return");
            Check(System.IO.File.Exists(mark), "the bridge was killed before it could exit on its own");
        }
        finally
        {
            try { System.IO.File.Delete(mark); } catch (Exception) { }
        }
    }

    // Kills the bridge's process and pumps until its Exited has been delivered (a hang guard, not a bound).
    static void Crash(OamMainThreadQueue queue, OamBridge bridge)
    {
        bool exited = false;
        bridge.Exited += e => exited = true;
        using (var p = Process.GetProcessById(bridge.ProcessId)) p.Kill();
        var watch = Stopwatch.StartNew();
        while (!exited && watch.ElapsedMilliseconds < 10000) { queue.Pump(); Thread.Sleep(1); }
        Check(exited, "Exited was not raised after the kill");
    }

    // OamBridgeRestarter is driven with made-up times (Tick(now)): nothing here depends on how fast the machine is.
    static void TestRestarter()
    {
        current = "a crashed bridge is restarted after the backoff, with its tools";
        var queue = new OamMainThreadQueue();
        var first = Start(queue);
        first.RegisterTool("open_gate", "Open a named gate.", GateSchema, args => "opened " + args.GetString("gate"));
        var restarter = new OamBridgeRestarter(first, () => new OamBridge(null, queue), maxRestarts: 2, backoffSeconds: 1);
        var restarted = new List<OamBridge>();
        var gaveUp = new List<OamBridgeException>();
        restarter.Restarted += b => restarted.Add(b);
        restarter.GaveUp += e => gaveUp.Add(e);
        var all = new List<OamBridge> { first };
        try
        {
            restarter.Tick(0);
            Check(restarter.Bridge == first && restarted.Count == 0, "restarted a live bridge");
            Crash(queue, first);
            restarter.Tick(10); // the crash is seen: the restart is due at 11
            restarter.Tick(10.9);
            Check(restarted.Count == 0, "restarted before the backoff (1 s) had passed");
            restarter.Tick(11);
            Check(restarted.Count == 1 && restarter.Bridge == restarted[0] && restarter.Bridge != first,
                "not restarted once the backoff had passed: " + restarted.Count);
            if (restarted.Count != 1) return;
            var second = restarter.Bridge;
            all.Add(second);
            Check(restarter.RestartsInARow == 1, "RestartsInARow " + restarter.RestartsInARow);
            Check(!second.HasExited, "the new bridge does not run");
            Wait(queue, second.InitializeAsync("tests"));
            var session = Wait(queue, second.CreateSessionAsync(tools: new[] { "open_gate" },
                model: Scripted(GateStep("north"), O().With("template", "{toolOutput}"))));
            Check(Wait(queue, session.RespondAsync("Open it.")).GetString("text") == "opened north",
                "the tool registered on the first bridge does not answer on the new one");

            current = "the backoff doubles for each restart in a row";
            Crash(queue, second);
            restarter.Tick(20); // due at 22 (2 s: the second restart in a row)
            restarter.Tick(21.9);
            Check(restarted.Count == 1, "restarted before the doubled backoff (2 s) had passed");
            restarter.Tick(22);
            Check(restarted.Count == 2 && restarter.RestartsInARow == 2, "not restarted: " + restarted.Count);
            if (restarted.Count != 2) return;
            var third = restarter.Bridge;
            all.Add(third);

            current = "it gives up after maxRestarts restarts in a row";
            Crash(queue, third);
            restarter.Tick(30);
            restarter.Tick(1000);
            Check(restarted.Count == 2, "restarted a third time (maxRestarts 2)");
            Check(gaveUp.Count == 1 && gaveUp[0].Code == -32023 && gaveUp[0].Message.StartsWith("The bridge process exited"),
                "GaveUp: " + gaveUp.Count);
            Check(restarter.Bridge == third && third.HasExited, "Bridge is not the last, dead one");
        }
        finally
        {
            foreach (var b in all) b.Dispose();
        }

        current = "a bridge that ran stably before it crashed starts a new count";
        queue = new OamMainThreadQueue();
        first = Start(queue);
        all = new List<OamBridge> { first };
        restarter = new OamBridgeRestarter(first, () => new OamBridge(null, queue), maxRestarts: 1, backoffSeconds: 1);
        restarted.Clear();
        gaveUp.Clear();
        restarter.Restarted += b => { restarted.Add(b); all.Add(b); };
        restarter.GaveUp += e => gaveUp.Add(e);
        try
        {
            restarter.Tick(0);
            Crash(queue, first);
            restarter.Tick(1);
            restarter.Tick(2);
            Check(restarted.Count == 1, "not restarted: " + restarted.Count);
            if (restarted.Count != 1) return;
            Wait(queue, restarter.Bridge.InitializeAsync("tests"));
            restarter.Tick(100); // ran 98 s (StableSeconds 60) before it crashes
            Crash(queue, restarter.Bridge);
            restarter.Tick(101);
            restarter.Tick(102);
            Check(restarted.Count == 2 && gaveUp.Count == 0, "after a stable run: restarts " + restarted.Count + ", gave up " + gaveUp.Count);

            current = "Stop(): no restart after it (the game quits, the scene unloads)";
            if (restarted.Count != 2) return;
            Wait(queue, restarter.Bridge.InitializeAsync("tests"));
            restarter.Stop();
            Crash(queue, restarter.Bridge);
            restarter.Tick(500);
            restarter.Tick(1000);
            Check(restarted.Count == 2 && gaveUp.Count == 0, "restarted after Stop(): " + restarted.Count);

            current = "a bridge ended by Dispose is not restarted";
            var disposed = Start(queue);
            all.Add(disposed);
            var watcher = new OamBridgeRestarter(disposed, () => new OamBridge(null, queue));
            watcher.Restarted += b => all.Add(b);
            watcher.Tick(0);
            disposed.Dispose();
            queue.Pump();
            watcher.Tick(1000);
            Check(watcher.Bridge == disposed && watcher.RestartsInARow == 0, "Dispose was taken for a crash");
        }
        finally
        {
            foreach (var b in all) b.Dispose();
        }
    }

    /// npc/restore: a key sent (even null or []) wins over the save; one left at null keeps the saved value.
    static void TestRestoreNpcKeys()
    {
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        try
        {
            current = "RestoreNpcAsync world, tools, options";
            bridge.RegisterTool("open_gate", "Open a named gate.", GateSchema, args => O().With("opened", true));
            bridge.RegisterTool("ring_bell", "Ring the bell.", null, args => O().With("rang", true));
            var village = Wait(queue, bridge.CreateWorldAsync(O().With("gold", 1), "village"));
            Wait(queue, bridge.CreateWorldAsync(O().With("gold", 2), "harbor"));
            var gorm = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Gorm"), npc: "gorm", world: village,
                tools: new[] { "open_gate" }, options: O().With("replyFormat", "text")));
            var save = Wait(queue, gorm.StateAsync());
            Func<string, JsonObject> stateOf = id =>
                ((JsonObject)Wait(queue, bridge.RequestAsync("npc/state", O().With("npc", id)))).GetObject("state");
            Func<JsonObject, string> toolsOf = state => string.Join(",",
                state.GetArray("tools").ConvertAll(t => ((JsonObject)t).GetString("name")).ToArray());

            // Left out: the saved world, tools and options come back.
            Wait(queue, bridge.RestoreNpcAsync(save, "kept"));
            var kept = stateOf("kept");
            Check(kept.GetString("world") == "village" && toolsOf(kept) == "open_gate"
                && kept.GetObject("options").GetString("replyFormat") == "text", kept.ToString());

            // Sent: another world (an id or an OamWorld), other registered tools, other options.
            Wait(queue, bridge.RestoreNpcAsync(save, "moved", world: "harbor", tools: new[] { "ring_bell" },
                options: O().With("replyFormat", "structured")));
            var moved = stateOf("moved");
            Check(moved.GetString("world") == "harbor" && toolsOf(moved) == "ring_bell"
                && moved.GetObject("options").GetString("replyFormat") == "structured", moved.ToString());
            Wait(queue, bridge.RestoreNpcAsync(save, "moved2", world: village));
            Check(stateOf("moved2").GetString("world") == "village", "an OamWorld as the world");

            // Json.Null sends null: no world, default options; no tools with an empty list.
            Wait(queue, bridge.RestoreNpcAsync(save, "detached", world: Json.Null, tools: new string[0],
                options: Json.Null));
            var detached = stateOf("detached");
            Check(detached.ContainsKey("world") && detached.Get("world") == null && toolsOf(detached) == ""
                && detached.GetObject("options").GetString("replyFormat") == "automatic", detached.ToString());
            Check(Json.Serialize(O().With("world", Json.Null)) == "{\"world\":null}" && Json.Null.ToString() == "null",
                "Json.Null writes null");

            // A tool name not registered is refused before anything is sent, as for CreateNpcAsync.
            bool threw = false;
            try { bridge.RestoreNpcAsync(save, "unknown", tools: new[] { "nope" }).GetAwaiter().GetResult(); }
            catch (ArgumentException) { threw = true; }
            Check(threw, "unknown tool name rejected");
        }
        finally
        {
            bridge.Dispose();
        }
    }

    static void TestRestoreOverALivingNpc()
    {
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        try
        {
            Func<string, JsonObject> stateOf = id => ((JsonObject)Wait(queue, bridge.RequestAsync("npc/state",
                O().With("npc", id).With("settle", false)))).GetObject("state");
            Func<string> npcs = () => string.Join(",", ((JsonObject)Wait(queue, bridge.RequestAsync("npc/list")))
                .GetArray("npcs").ConvertAll(n => ((JsonObject)n).GetString("npc")).ToArray());

            current = "npc.RestoreAsync(save) loads a save over a living, talking NPC under its id";
            var model = Scripted(O().With("text", "[calm] First."),
                O().With("text", "[happy] Zzz.").With("delayMs", 60000));
            var gorm = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Gorm"), npc: "gorm", options: TextReplies,
                model: model));
            Check(Wait(queue, gorm.TalkAsync("Hello")).GetString("line") == "First.", "the first talk");
            var save = Wait(queue, gorm.StateAsync());
            var lines = new List<string>();
            var talking = gorm.TalkAsync("Wake up.", onLine: lines.Add);
            stateOf("gorm"); // the talk was sent first
            var restored = Wait(queue, gorm.RestoreAsync(save)); // the player loads the save while Gorm talks
            var why = WaitError(queue, talking) as OamBridgeException;
            Check(why != null && why.Code == -32009, "the talk ended with: " + (why == null ? "no error" : why.Message));
            Check(why != null && why.Message.EndsWith(" 'npc/talk' was cancelled with the rest of NPC 'gorm''s work when "
                + "npc.RestoreAsync() replaced the NPC (it deletes it first).", StringComparison.Ordinal),
                "the talk does not say why: " + (why == null ? "no error" : why.Message));
            Check(lines.Count == 0, "lines after the restore: " + string.Join(" | ", lines.ToArray()));
            Check(restored.Id == "gorm" && npcs() == "gorm", restored.Id + " / " + npcs());
            Check(Json.Serialize(stateOf("gorm")) == Json.Serialize(save), "the restored NPC is the save");
            // The model is not saved: the NPC runs on the one its handle was created with (from its first step).
            Check(Wait(queue, restored.TalkAsync("Hello")).GetString("line") == "First.", "the restored NPC's model");

            current = "npc.RestoreAsync(save) called in onLine: no more of the old line";
            var cole = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Cole"), npc: "cole", options: TextReplies,
                model: Scripted(Reply("Cole has a long story about the old mill by the river and its miller.")
                    .With("delayMs", 20), O().With("text", "[calm] Welcome back."))));
            var coleSave = Wait(queue, cole.StateAsync());
            var coleLines = new List<string>();
            Task<OamNpc> loading = null;
            var coleTurn = cole.TalkAsync("Tell me.", onLine: text =>
            {
                coleLines.Add(text);
                if (loading == null) loading = cole.RestoreAsync(coleSave); // at the first words
            });
            UntilAnswered(bridge);
            queue.Pump();
            Check(coleLines.Count == 1, "Cole went on talking after RestoreAsync: " + string.Join(" | ", coleLines.ToArray()));
            var coleBack = Wait(queue, loading);
            WaitError(queue, coleTurn); // the reply when the talk had ended before the restore, else -32009
            var next = new List<string>();
            var reply = Wait(queue, coleBack.TalkAsync("Hi", onLine: next.Add));
            Check(next.Count > 0 && next[next.Count - 1] == reply.GetString("line"), "the restored Cole's line in full");

            current = "npc.RestoreAsync of a save the bridge refuses fails with its error and keeps the NPC as it was";
            var bram = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Bram"), npc: "bram", options: TextReplies,
                memory: O().With("relationship", 25), model: Scripted(O().With("text", "[calm] Three axes."))));
            Wait(queue, bram.TalkAsync("Any axes?"));
            var before = Wait(queue, bram.StateAsync());
            var edited = Json.Parse(Json.Serialize(before)) as JsonObject;
            edited.GetObject("memory")["relationship"] = 500; // a save edited by hand
            var refused = WaitError(queue, bram.RestoreAsync(edited)) as OamBridgeException;
            Check(refused != null && refused.Code == -32602
                && refused.Message.Contains("'state.memory.relationship' must be at most 100"),
                "the refusal: " + (refused == null ? "none" : refused.Message));
            Check(npcs() == "gorm,cole,bram", "the NPCs: " + npcs());
            Check(Json.Serialize(stateOf("bram")) == Json.Serialize(before), "nothing of the NPC was lost");
            Check(Wait(queue, bram.TalkAsync("Any axes?")).GetString("line") == "Three axes.", "Bram on his model");

            current = "npc.RestoreAsync refuses a value JSON cannot send or an unknown tool before anything is sent";
            var now = Json.Serialize(stateOf("bram"));
            edited.GetObject("memory")["relationship"] = double.NaN;
            Check(WaitError(queue, bram.RestoreAsync(edited)) is ArgumentException, "NaN refused");
            Check(WaitError(queue, bram.RestoreAsync(before, tools: new[] { "nope" })) is ArgumentException,
                "an unknown tool refused");
            Check(Json.Serialize(stateOf("bram")) == now && npcs() == "gorm,cole,bram", "Bram goes on as he was");
        }
        finally
        {
            bridge.Dispose();
        }
    }

    static void TestNullArguments()
    {
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        try
        {
            current = "Json.Null where the bridge gives null a meaning";
            bridge.RegisterTool("open_gate", "Open a named gate.", GateSchema, args => O().With("opened", true));
            Func<string, JsonObject> sessionEntry = id =>
            {
                var list = (JsonObject)Wait(queue, bridge.RequestAsync("session/list"));
                return (JsonObject)list.GetArray("sessions").Find(e => ((JsonObject)e).GetString("session") == id);
            };
            var guard = Wait(queue, bridge.CreateSessionAsync("You are a guard.", new[] { "open_gate" },
                model: "scripted", session: "guard"));
            var saved = Wait(queue, guard.TranscriptAsync());

            // Left at null: the saved instructions and tools come back.
            Wait(queue, bridge.CreateSessionAsync(history: saved, model: "scripted", session: "kept"));
            var kept = sessionEntry("kept");
            Check(kept.GetString("instructions") == "You are a guard." && kept.GetArray("tools").Count == 1,
                kept.ToString());
            // Json.Null: resumed without the saved instructions (a string still works positionally).
            Wait(queue, bridge.CreateSessionAsync(Json.Null, history: saved, model: "scripted", session: "bare"));
            var bare = sessionEntry("bare");
            Check(!bare.ContainsKey("instructions") && bare.GetArray("tools").Count == 1, bare.ToString());
            Wait(queue, bridge.CreateSessionAsync("You are a bell ringer.", new string[0], history: saved,
                model: "scripted", session: "other"));
            var other = sessionEntry("other");
            Check(other.GetString("instructions") == "You are a bell ringer." && other.GetArray("tools").Count == 0,
                other.ToString());
            bool threw = false;
            try { bridge.CreateSessionAsync(42).GetAwaiter().GetResult(); }
            catch (ArgumentException) { threw = true; }
            Check(threw, "instructions that are neither text nor Json.Null are refused");

            // RestoreNpcAsync(npc: Json.Null): the save under a new generated id (the saved one is in use).
            var gorm = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Gorm"), npc: "gorm", model: "scripted"));
            var save = Wait(queue, gorm.StateAsync());
            var twin = Wait(queue, bridge.RestoreNpcAsync(save, npc: Json.Null, model: "scripted"));
            Check(twin.Id != "gorm" && twin.Id.StartsWith("npc"), "a generated id: " + twin.Id);
            var copy = Wait(queue, bridge.RestoreNpcAsync(save, gorm.Id == "gorm" ? "copy" : null, "scripted"));
            Check(copy.Id == "copy", "an id as text still works: " + copy.Id);

            // UpdateAsync(tools: ...) replaces the client tools (an empty list: none).
            Func<string> npcTools = () =>
            {
                var list = (JsonObject)Wait(queue, bridge.RequestAsync("npc/list"));
                var entry = (JsonObject)list.GetArray("npcs").Find(e => ((JsonObject)e).GetString("npc") == "gorm");
                return string.Join(",", entry.GetArray("tools").ConvertAll(t => (string)t).ToArray());
            };
            Wait(queue, gorm.UpdateAsync(tools: new[] { "open_gate" }));
            Check(npcTools() == "open_gate", "tools after update: " + npcTools());
            Wait(queue, gorm.UpdateAsync(O().With("role", "smith"), tools: null));
            Check(npcTools() == "open_gate", "tools left at null are kept: " + npcTools());
            Wait(queue, gorm.UpdateAsync(tools: new string[0]));
            Check(npcTools() == "", "no tools after an empty list: " + npcTools());
        }
        finally
        {
            bridge.Dispose();
        }
    }

    // A bridge that stopped reading does not let the lines wait without end: past the queue limit (64 MiB waiting
    // to be written) a request fails with -32010 busy and a notification throws it; the answer to a tool/call the
    // bridge waits for still goes; once it reads again, requests go again.
    static void TestQueueLimit()
    {
        current = "sends past the queue limit of a frozen bridge are refused";
        if (Environment.OSVersion.Platform != PlatformID.Unix) return;
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        int pid = bridge.ProcessId;
        try
        {
            var gate = new TaskCompletionSource<object>();
            bool called = false;
            bridge.RegisterTool("open_gate", "Open a named gate.", GateSchema, args => { called = true; return gate.Task; });
            var guard = Wait(queue, bridge.CreateSessionAsync("You are a guard.", new[] { "open_gate" },
                model: Scripted(GateStep("north"), O().With("template", "Gate: {toolOutput}"))));
            var turn = guard.RespondAsync("Open the north gate.");
            var watch = Stopwatch.StartNew();
            while (!called && watch.ElapsedMilliseconds < 15000) { queue.Pump(); Thread.Sleep(1); }
            Check(called, "the tool/call did not arrive");
            Signal(pid, "STOP");

            string padding = new string('x', 1024 * 1024);
            var accepted = new List<Task<object>>();
            Task<object> refused = null;
            for (int i = 0; i < 1000 && refused == null; i++)
            {
                var task = bridge.RequestAsync("ping", O().With("padding", padding));
                if (task.IsFaulted) refused = task;
                else accepted.Add(task);
            }
            // 64 MiB wait in the queue, a little more in the pipe and the line being written.
            Check(accepted.Count >= 64 && accepted.Count <= 70, accepted.Count + " requests of 1 MiB were queued");
            var error = refused == null ? null : WaitError(queue, refused) as OamBridgeException;
            Check(error != null && error.Code == -32010 && error.DataCode == "busy"
                && error.ErrorData.GetLong("limit") == 64L * 1024 * 1024
                && error.Message.Contains("'ping' was not sent"), "the refused request: " + error);
            // The limit counts bytes: short notifications fill what is left of it, then they throw too.
            OamBridgeException thrown = null;
            int notes = 0;
            for (; notes < 100000 && thrown == null; notes++)
            {
                try { bridge.Notify("ping"); }
                catch (OamBridgeException e) { thrown = e; }
            }
            Check(thrown != null && thrown.Code == -32010 && notes <= 1024 * 1024 / 34 + 1,
                "a short notification " + notes + ": " + thrown);
            thrown = null;
            try { bridge.Notify("session/cancel", O().With("session", "other")); }
            catch (OamBridgeException e) { thrown = e; }
            Check(thrown != null && thrown.Message.Contains("'session/cancel' was not sent"), "a longer notification: " + thrown);

            // The tool's answer goes all the same, and the bridge gets it once it reads again.
            gate.SetResult("opened");
            queue.Pump();
            Signal(pid, "CONT");
            foreach (var task in accepted) Wait(queue, task, 60000);
            var reply = Wait(queue, turn, 60000);
            Check(reply.GetString("text") == "Gate: opened", "the turn: " + reply);
            Check(Wait(queue, bridge.RequestAsync("ping")) != null, "a request after the bridge read again");
        }
        finally
        {
            if (ProcessExists(pid)) Signal(pid, "CONT");
            bridge.Dispose();
        }
    }

    // The queue limit is four of the longest lines the bridge reads: a bridge started with --max-line-bytes 256 KiB
    // lets 1 MiB wait (one with a higher limit as many of its longest lines as the default bridge).
    static void TestQueueLimitScales()
    {
        current = "the queue limit is four times the bridge's --max-line-bytes";
        if (Environment.OSVersion.Platform != PlatformID.Unix) return;
        var queue = new OamMainThreadQueue();
        var command = new List<string>(OamBridge.ResolveCommand(null)) { "--max-line-bytes=262144" };
        var bridge = new OamBridge(command.ToArray(), queue);
        bridge.Start();
        int pid = bridge.ProcessId;
        try
        {
            Wait(queue, bridge.InitializeAsync("tests"));
            Signal(pid, "STOP");
            string padding = new string('x', 100 * 1024);
            var accepted = new List<Task<object>>();
            Task<object> refused = null;
            for (int i = 0; i < 1000 && refused == null; i++)
            {
                var task = bridge.RequestAsync("ping", O().With("padding", padding));
                if (task.IsFaulted) refused = task;
                else accepted.Add(task);
            }
            // 1 MiB waits in the queue (ten of these lines), a little more in the pipe and the line being written.
            Check(accepted.Count >= 10 && accepted.Count <= 13, accepted.Count + " requests of 100 KiB were queued");
            var error = refused == null ? null : WaitError(queue, refused) as OamBridgeException;
            Check(error != null && error.Code == -32010 && error.ErrorData.GetLong("limit") == 1024 * 1024,
                "the refused request: " + error);
            Signal(pid, "CONT");
            foreach (var task in accepted) Wait(queue, task, 60000);
        }
        finally
        {
            if (ProcessExists(pid)) Signal(pid, "CONT");
            bridge.Dispose();
        }
    }

    static void TestMessageTooLong()
    {
        current = "a message longer than the bridge reads is refused before it is sent";
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        try
        {
            Check(bridge.MaxLineBytes == 16L * 1024 * 1024, "the default limit: " + bridge.MaxLineBytes);
            string lore = new string('a', 16 * 1024 * 1024);
            // The bridge skips such a line and answers it with id null: the call waited for ever.
            var ping = bridge.RequestAsync("ping", O().With("x", lore));
            Check(ping.IsFaulted, "a 16 MiB ping fails at once (status " + ping.Status + ")");
            var error = ping.IsFaulted ? WaitError(queue, ping) as OamBridgeException : null;
            Check(error != null && error.Code == -32600 && error.DataCode == "invalid_message"
                && error.ErrorData.GetLong("limit") == 16L * 1024 * 1024
                && error.Message.Contains("longer than the 16777216 bytes the bridge reads; it was not sent")
                && !error.Message.Contains("in parts"), "the refused ping: " + error);
            // A saved world's state that large is told how to load it in parts.
            var world = bridge.CreateWorldAsync(O().With("lore", lore));
            Check(world.IsFaulted, "a 16 MiB world/create fails at once (status " + world.Status + ")");
            error = world.IsFaulted ? WaitError(queue, world) as OamBridgeException : null;
            Check(error != null && error.Code == -32600 && error.DataCode == "invalid_message"
                && error.Message.Contains("it was not sent") && error.Message.EndsWith(
                    " A world's state this large loads in parts: world/create with part of it, then world/merge the "
                    + "rest, a few keys at a time (docs/PROTOCOL.md \u00a76, 'Saving a world')."),
                "the refused world/create: " + error);
            var village = Wait(queue, bridge.CreateWorldAsync(O().With("gold", 1)));
            var merge = village.MergeAsync(O().With("lore", lore));
            Check(merge.IsFaulted, "a 16 MiB world/merge fails at once (status " + merge.Status + ")");
            error = merge.IsFaulted ? WaitError(queue, merge) as OamBridgeException : null;
            Check(error != null && error.Message.Contains("loads in parts"), "the refused world/merge: " + error);
            OamBridgeException thrown = null;
            try { bridge.Notify("ping", O().With("x", lore)); }
            catch (OamBridgeException e) { thrown = e; }
            Check(thrown != null && thrown.Code == -32600 && thrown.ErrorData.GetLong("limit") == 16L * 1024 * 1024,
                "a 16 MiB notification throws: " + thrown);
            Check(Wait(queue, bridge.RequestAsync("ping")) != null, "the next call is answered");
        }
        finally
        {
            bridge.Dispose();
        }

        current = "the --max-line-bytes of the bridge's command";
        foreach (var flag in new[] { new[] { "--max-line-bytes", "4096" }, new[] { "--max-line-bytes=4096" } })
        {
            var argv = new List<string>(OamBridge.ResolveCommand(null));
            argv.AddRange(flag);
            bridge = new OamBridge(argv.ToArray(), queue);
            bridge.Start();
            try
            {
                Wait(queue, bridge.InitializeAsync("tests"));
                Check(bridge.MaxLineBytes == 4096, string.Join(" ", flag) + ": " + bridge.MaxLineBytes);
                var refused = bridge.RequestAsync("ping", O().With("x", new string('a', 4096)));
                var error = refused.IsFaulted ? WaitError(queue, refused) as OamBridgeException : null;
                Check(error != null && error.ErrorData.GetLong("limit") == 4096
                    && error.Message.Contains("longer than the 4096 bytes the bridge reads"), "4 KiB refused: " + error);
                // Bytes, not characters: 1500 two-byte characters are 3000 bytes, 2100 of them 4200.
                Check(Wait(queue, bridge.RequestAsync("ping", O().With("x", new string('\u00e9', 1500)))) != null,
                    "3000 bytes go");
                Check(bridge.RequestAsync("ping", O().With("x", new string('\u00e9', 2100))).IsFaulted,
                    "4200 bytes of 2100 characters are refused");
            }
            finally
            {
                bridge.Dispose();
            }
        }

        current = "a tool result longer than the bridge reads";
        {
            var argv = new List<string>(OamBridge.ResolveCommand(null)) { "--max-line-bytes", "4096" };
            bridge = new OamBridge(argv.ToArray(), queue);
            bridge.Start();
            try
            {
                Wait(queue, bridge.InitializeAsync("tests"));
                bridge.RegisterTool("open_gate", "Open a named gate.", GateSchema, args => new string('x', 5000), timeoutSeconds: 10);
                var guard = Wait(queue, bridge.CreateSessionAsync("You are a guard.", new[] { "open_gate" },
                    model: Scripted(GateStep("north"), O().With("template", "Gate: {toolOutput}"))));
                // Unsent, the model waited for the tool's timeout; it now gets an error output at once.
                var reply = Wait(queue, guard.RespondAsync("Open the north gate."), 60000);
                string text = reply.GetString("text") ?? "";
                Check(text.Contains("The tool result is") && text.Contains("longer than the 4096 bytes the bridge reads"),
                    "the model's tool output: " + text);
            }
            finally
            {
                bridge.Dispose();
            }
        }
    }

    static void TestListenersIsolated()
    {
        // A console program (callbacks on the reader thread) and a game (callbacks pumped on the main thread).
        foreach (bool pumped in new[] { false, true })
        {
            current = "a throwing world callback or listener leaves the other listeners their line ("
                + (pumped ? "OamMainThreadQueue" : "ImmediateDispatcher") + ")";
            var queue = new OamMainThreadQueue();
            var reported = new List<Exception>();
            queue.OnError = e => reported.Add(e);
            var console = new System.IO.StringWriter();
            var standardError = Console.Error;
            var bridge = new OamBridge(null, pumped ? queue : null);
            var seen = new List<string>();
            var last = new TaskCompletionSource<bool>();
            bridge.NotificationReceived += (method, p) => { lock (seen) seen.Add("hud " + method); };
            bridge.NotificationReceived += (method, p) =>
            {
                if (method == "world/changed") throw new InvalidOperationException("quest log listener broke");
            };
            bridge.NotificationReceived += (method, p) =>
            {
                lock (seen) seen.Add("audio " + method);
                if (method == "world/changed") last.TrySetResult(true);
            };
            Console.SetError(System.IO.TextWriter.Synchronized(console));
            try
            {
                bridge.Start();
                Wait(queue, bridge.InitializeAsync("tests"));
                var world = Wait(queue, bridge.CreateWorldAsync(O().With("weather", "sun")));
                Wait(queue, world.SubscribeAsync("weather", change =>
                {
                    throw new NullReferenceException("weather label destroyed");
                }));
                Wait(queue, world.SetAsync("weather", "fog"));
                Exception waited = WaitError(queue, last.Task); // without the fix, the last listener never ran
                Check(waited == null && seen.Contains("hud world/changed") && seen.Contains("audio world/changed"),
                    "every other listener got world/changed: " + string.Join(", ", seen));
                string errors = console.ToString();
                if (pumped)
                {
                    Check(reported.Exists(e => e.Message == "weather label destroyed")
                        && reported.Exists(e => e.Message == "quest log listener broke"),
                        "both went to OnError: " + string.Join(" | ", reported.ConvertAll(e => e.Message).ToArray()));
                }
                else
                {
                    Check(errors.Contains("callback failed: System.NullReferenceException: weather label destroyed")
                        && errors.Contains("callback failed: System.InvalidOperationException: quest log listener broke"),
                        "both were reported on Console.Error: " + errors);
                }
            }
            finally
            {
                bridge.Dispose();
                Console.SetError(standardError);
            }
        }
    }

    static void TestWarningsReported()
    {
        // The bridge's warnings on results the client reduces to a value (a subscription id, the content, the results)
        // were dropped: a subscription to a misspelt path never fired and nothing said why.
        current = "the bridge's warnings reach LogReceived, and an NPC's handle keeps its own";
        var queue = new OamMainThreadQueue();
        var bridge = new OamBridge(null, queue);
        var logged = new List<string>();
        bridge.LogReceived += line => logged.Add(line);
        try
        {
            bridge.Start();
            Wait(queue, bridge.InitializeAsync("tests"));
            var world = Wait(queue, bridge.CreateWorldAsync(O().With("quests", O().With("wolves", 1))));
            Wait(queue, world.SubscribeAsync("quests.wolfs", change => { }));
            Check(logged.Exists(l => l.StartsWith("world.SubscribeAsync('quests.wolfs'): ") && l.Contains("'quests' has keys: wolves")),
                "the misspelt path's warning was logged: " + string.Join(" | ", logged.ToArray()));
            Wait(queue, bridge.GenerateAsync("Loot.", O().With("type", "object")
                .With("properties", O().With("stats", O().With("type", "object"))),
                model: Scripted(O().With("json", O().With("stats", O())))));
            Check(logged.Exists(l => l.StartsWith("GenerateAsync: #/properties/stats: object without 'properties'")),
                "generate's warning was logged: " + string.Join(" | ", logged.ToArray()));
            Wait(queue, bridge.DecideManyAsync(new object[] {
                O().With("situation", "A wolf.").With("options", new List<object> { "fight", "flee" }).With("mood", "grim") },
                model: Scripted(O().With("json", O().With("reasoning", "r").With("choice", "flee").With("confidence", 50)))));
            Check(logged.Exists(l => l.StartsWith("DecideManyAsync: ") && l.Contains("mood")),
                "decideMany's warning was logged: " + string.Join(" | ", logged.ToArray()));
            var gorm = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Gorm").With("hairColour", "red"), world: world));
            Check(gorm.Warnings.Exists(w => ("" + w).Contains("persona.hairColour")),
                "the NPC's handle has npc/create's warnings: " + Json.Serialize(gorm.Warnings));
            // A save loaded where its world is gone: the NPC comes back without one, and says so.
            var save = Wait(queue, gorm.StateAsync());
            Wait(queue, world.DeleteAsync());
            var twin = Wait(queue, bridge.RestoreNpcAsync(save, npc: Json.Null));
            Check(twin.Warnings.Exists(w => ("" + w).Contains("the NPC was restored without a world")),
                "the restored NPC's handle has npc/restore's warnings: " + Json.Serialize(twin.Warnings));
            // A save keeps its tools' definitions, not their handlers: a call of one the game did not register
            // again gave the model an error output, and the game heard nothing.
            Wait(queue, bridge.RequestAsync("session/create", O().With("session", "ringer")
                .With("tools", new List<object> { O().With("name", "ring_bell").With("description", "Ring.") })
                .With("model", Scripted(
                    O().With("toolCalls", new List<object> { O().With("name", "ring_bell").With("arguments", O()) }),
                    O().With("template", "{toolOutput}")))));
            var rung = (JsonObject)Wait(queue, bridge.RequestAsync("session/respond",
                O().With("session", "ringer").With("prompt", "Ring it.")));
            Check(("" + rung.GetString("text")).Contains("No handler for tool 'ring_bell'"), rung.ToString());
            Check(logged.Exists(l => l.StartsWith("The model called tool 'ring_bell' (session 'ringer'), but no handler is registered for it in this client")),
                "the call of a tool without a handler was logged: " + string.Join(" | ", logged.ToArray()));
            var again = Wait(queue, gorm.RestoreAsync(save));
            Check(again.Warnings.Exists(w => ("" + w).Contains("the NPC was restored without a world")),
                "RestoreAsync's handle has npc/restore's warnings: " + Json.Serialize(again.Warnings));
        }
        finally
        {
            bridge.Dispose();
        }
    }

    static void TestHandlesForIds()
    {
        // A tool handler knows its NPC by id (ToolCallContext.Npc): it had no handle to save it with, and a save that
        // waited for the NPC's earlier requests waited for the very talk that called the tool, until its timeout.
        current = "handles for ids, and an NPC saved from its own tool handler";
        var queue = new OamMainThreadQueue();
        var bridge = Start(queue);
        try
        {
            var saves = new List<JsonObject>();
            bridge.RegisterTool("give_sword", "Hand the player a sword.", null, async (args, ctx) =>
            {
                OamNpc giver = bridge.Npc(ctx.Npc);
                saves.Add(await giver.StateAsync(settle: false)); // an autosave as the item changes hands
                return (object)new JsonObject().With("given", true).With("by", giver.Id);
            }, timeoutSeconds: 10);
            var gorm = Wait(queue, bridge.CreateNpcAsync(O().With("name", "Gorm"), npc: "gorm", tools: new[] { "give_sword" },
                options: TextReplies, model: Scripted(
                    O().With("toolCalls", new List<object> { O().With("name", "give_sword").With("arguments", O()) }),
                    Reply("Take it."))));
            var reply = Wait(queue, gorm.TalkAsync("A sword, please."));
            var record = (JsonObject)reply.GetArray("toolCalls")[0];
            Check(!record.GetBool("isError") && Json.Serialize(record.Get("output")) == "{\"given\":true,\"by\":\"gorm\"}",
                "the handler saved its NPC and answered: " + record);
            Check(saves.Count == 1 && saves[0] != null && saves[0].GetString("npc") == "gorm",
                "the save of the completed turns: " + (saves.Count > 0 ? Json.Serialize(saves[0]) : "none"));

            Wait(queue, bridge.RequestAsync("session/create", O().With("session", "guard").With("model",
                Scripted(O().With("text", "Halt!")))));
            OamSession guard = bridge.Session("guard");
            Check(Wait(queue, guard.RespondAsync("Hello")).GetString("text") == "Halt!", "a session's handle by id");
            Wait(queue, bridge.CreateWorldAsync(O().With("gold", 5), "village"));
            OamWorld village = bridge.World("village");
            Check(Equals(Wait(queue, village.GetAsync("gold")), 5L), "a world's handle by id");
            bool threw = false;
            try { bridge.Npc(""); } catch (ArgumentException) { threw = true; }
            Check(threw, "an empty id is refused");
        }
        finally
        {
            bridge.Dispose();
        }
    }

    static int Main()
    {
        mainThread = Thread.CurrentThread.ManagedThreadId;
        var tests = new Action[] { TestJson, TestSessions, TestGame, TestWalkAway, TestNoCallbackAfterDispose, TestLifecycle, TestDisposeFrozenBridge,
            TestDisposeWaitsOnlyForALiveBridge, TestRestarter, TestRestoreNpcKeys, TestRestoreOverALivingNpc, TestNullArguments,
            TestQueueLimit, TestQueueLimitScales, TestMessageTooLong, TestListenersIsolated, TestWarningsReported, TestHandlesForIds };
        foreach (var test in tests)
        {
            try { test(); }
            catch (Exception e)
            {
                failures++;
                Console.Error.WriteLine("FAIL " + current + ": " + e);
            }
        }
        Console.WriteLine(checks + " checks, " + failures + " failures");
        return failures == 0 ? 0 : 1;
    }
}
