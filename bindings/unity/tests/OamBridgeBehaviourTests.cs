// OamBridgeBehaviourTests.cs - runs OamBridgeBehaviour.cs against the UnityEngine stub the way Unity would call it
// (Awake, Update every frame, OnDestroy), with the real bridge process. Built and run by tests/bindings/csharp_test.ts.

using System;
using System.Diagnostics;
using System.Reflection;
using System.Threading;
using System.Threading.Tasks;
using OpenAppleModels;

static class OamBridgeBehaviourTests
{
    static int failures;
    static int checks;
    static string current = "";

    static void Check(bool condition, string what)
    {
        checks++;
        if (!condition)
        {
            failures++;
            Console.Error.WriteLine("FAIL " + current + ": " + what);
        }
    }

    // What the engine does: calls the private message methods by name.
    static void Message(OamBridgeBehaviour behaviour, string name)
    {
        var method = typeof(OamBridgeBehaviour).GetMethod(name, BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public);
        if (method != null) method.Invoke(behaviour, null); // Unity skips messages a script does not define
    }

    // Frames until the task finishes.
    static Exception Frames<T>(OamBridgeBehaviour behaviour, Task<T> task)
    {
        var watch = Stopwatch.StartNew();
        while (!task.IsCompleted && watch.ElapsedMilliseconds < 15000)
        {
            Message(behaviour, "Update");
            Thread.Sleep(1);
        }
        Message(behaviour, "Update");
        if (!task.IsCompleted) return new TimeoutException("the task did not finish");
        return task.Exception != null ? task.Exception.InnerException : null;
    }

    static JsonObject O() { return new JsonObject(); }

    static void TestAwakeOrder()
    {
        current = "another script's Awake runs first";
        var oam = new OamBridgeBehaviour();
        OamBridge bridge = null;
        try
        {
            // Unity does not order Awake across scripts: a game script may register its tools before ours ran.
            bridge = oam.Bridge;
            Check(bridge != null, "Bridge is null before OamBridgeBehaviour.Awake");
            if (bridge == null) return;
            bridge.RegisterTool("open_gate", "Open a gate.", null, args => "opened");
            Message(oam, "Awake");
            Check(oam.Bridge == bridge, "Awake replaced the bridge the tools were registered on");
            var session = oam.Bridge.CreateSessionAsync(tools: new[] { "open_gate" }, model: O().With("type", "scripted")
                .With("steps", new System.Collections.Generic.List<object> {
                    O().With("toolCalls", new System.Collections.Generic.List<object> { O().With("name", "open_gate").With("arguments", O()) }),
                    O().With("template", "{toolOutput}") }));
            Exception error = Frames(oam, session);
            Check(error == null, "session/create: " + error);
            if (error != null) return;
            var turn = session.Result.RespondAsync("Open it.");
            error = Frames(oam, turn);
            Check(error == null && turn.Result.GetString("text") == "opened", error != null ? error.ToString() : turn.Result.ToString());

            current = "calls after OnDestroy";
            Message(oam, "OnDestroy");
            Check(oam.Bridge != null, "Bridge is null after OnDestroy (callers get NullReferenceException)");
            if (oam.Bridge == null) return;
            var late = oam.Bridge.CreateSessionAsync("x");
            error = Frames(oam, late);
            var bridgeError = error as OamBridgeException;
            Check(bridgeError != null && bridgeError.DataCode == "shut_down", "" + error);
        }
        finally
        {
            if (bridge != null) bridge.Dispose();
        }
    }

    static void TestExtraArguments()
    {
        current = "extraArguments without bridgePath";
        var oam = new OamBridgeBehaviour();
        oam.extraArguments = "--tool-timeout 30";
        Message(oam, "Awake");
        try
        {
            string[] command = oam.Bridge.Command;
            string expected = string.Join(" ", OamBridge.ResolveCommand(null)) + " --tool-timeout 30";
            Check(string.Join(" ", command) == expected, "started " + string.Join(" ", command));
        }
        finally
        {
            Message(oam, "OnDestroy");
        }
    }

    // The bridge an OamBridgeBehaviour started itself (null: none), whatever its Bridge property returns.
    static OamBridge OwnBridge(OamBridgeBehaviour behaviour)
    {
        return (OamBridge)typeof(OamBridgeBehaviour).GetField("bridge", BindingFlags.Instance | BindingFlags.NonPublic)
            .GetValue(behaviour);
    }

    static bool Pings(OamBridgeBehaviour behaviour)
    {
        var ping = behaviour.Bridge.RequestAsync("ping");
        Exception error = Frames(behaviour, ping);
        Check(error == null, "ping: " + error);
        return error == null;
    }

    static void TestSceneReloaded()
    {
        current = "the scene with the bridge object is loaded again (dontDestroyOnLoad)";
        UnityEngine.Object.DestroyCalls.Clear();
        var first = new OamBridgeBehaviour();
        var copy = new OamBridgeBehaviour();
        try
        {
            Message(first, "Awake");
            Check(OamBridgeBehaviour.Instance == first, "Instance is not the behaviour that started");
            Check(UnityEngine.Object.DontDestroyOnLoadCalls.Contains(first.gameObject), "DontDestroyOnLoad was not called");

            // The scene's copy: a script of the reloaded scene reads Bridge before the copy's Awake ran.
            OamBridge early = copy.Bridge;
            Check(early == first.Bridge, "the copy's Bridge is not the live one (a second bridge was started)");
            Message(copy, "Awake");
            Check(OwnBridge(copy) == null, "the copy started a second bridge process");
            Check(UnityEngine.Object.DestroyCalls.Contains(copy.gameObject), "the copy's GameObject was not destroyed");
            Check(!UnityEngine.Object.DontDestroyOnLoadCalls.Contains(copy.gameObject), "the copy was made persistent too");
            Check(copy.Bridge == first.Bridge, "the copy's Bridge is not the live one after Awake");
            Check(OamBridgeBehaviour.Instance == first, "Instance is not the live behaviour");
            Message(copy, "Update");
            Message(copy, "OnDestroy"); // what Unity does at the end of the frame
            Check(!first.Bridge.HasExited, "destroying the copy shut the live bridge down");
            Check(OamBridgeBehaviour.Instance == first, "Instance changed when the copy was destroyed");
            Pings(first);

            current = "a new persistent behaviour once the first is gone";
            Message(first, "OnDestroy");
            Check(OamBridgeBehaviour.Instance == null, "Instance is a destroyed behaviour");
            var next = new OamBridgeBehaviour();
            try
            {
                Message(next, "Awake");
                Check(OwnBridge(next) != null && OwnBridge(next) != OwnBridge(first), "the new one did not start its bridge");
                Check(!UnityEngine.Object.DestroyCalls.Contains(next.gameObject), "the new one was destroyed");
                Check(OamBridgeBehaviour.Instance == next, "Instance is not the new one");
                Pings(next);
            }
            finally
            {
                Message(next, "OnDestroy");
            }
            Check(OamBridgeBehaviour.Instance == null, "Instance is a destroyed behaviour");
        }
        finally
        {
            Message(copy, "OnDestroy");
            Message(first, "OnDestroy");
        }
    }

    static void TestSceneBound()
    {
        current = "behaviours without dontDestroyOnLoad in two scenes";
        UnityEngine.Object.DestroyCalls.Clear();
        var a = new OamBridgeBehaviour { dontDestroyOnLoad = false };
        var b = new OamBridgeBehaviour { dontDestroyOnLoad = false };
        try
        {
            Message(a, "Awake");
            Message(b, "Awake");
            Check(UnityEngine.Object.DestroyCalls.Count == 0, "a scene-bound behaviour was destroyed");
            Check(!UnityEngine.Object.DontDestroyOnLoadCalls.Contains(a.gameObject) && !UnityEngine.Object.DontDestroyOnLoadCalls.Contains(b.gameObject),
                "a scene-bound behaviour was made persistent");
            Check(OwnBridge(a) != null && OwnBridge(b) != null && a.Bridge != b.Bridge, "each should run its own bridge");
            Check(OamBridgeBehaviour.Instance == a, "Instance is not the first one");
            Pings(a);
            Pings(b);

            current = "a persistent behaviour beside scene-bound ones";
            var persistent = new OamBridgeBehaviour();
            try
            {
                Message(persistent, "Awake");
                Check(OwnBridge(persistent) != null && !UnityEngine.Object.DestroyCalls.Contains(persistent.gameObject),
                    "the persistent one did not start");
                Check(OamBridgeBehaviour.Instance == persistent, "Instance is not the persistent one");
            }
            finally
            {
                Message(persistent, "OnDestroy");
            }
            Check(OamBridgeBehaviour.Instance == a, "Instance is not the first scene-bound one again");

            current = "the first scene is unloaded";
            Message(a, "OnDestroy");
            Check(OamBridgeBehaviour.Instance == b, "Instance is not the one left");
            Check(!b.Bridge.HasExited, "unloading one scene shut the other's bridge down");
            Pings(b);
        }
        finally
        {
            Message(a, "OnDestroy");
            Message(b, "OnDestroy");
        }
        Check(OamBridgeBehaviour.Instance == null, "Instance is a destroyed behaviour");
    }

    // Runs frames, the clock moving on by step seconds each, until done() or the hang guard (wall clock).
    static void FramesUntil(OamBridgeBehaviour behaviour, Func<bool> done, float step, int atMostFrames = 100000)
    {
        var watch = Stopwatch.StartNew();
        for (int i = 0; i < atMostFrames && !done() && watch.ElapsedMilliseconds < 15000; i++)
        {
            UnityEngine.Time.realtimeSinceStartup += step;
            Message(behaviour, "Update");
            Thread.Sleep(1);
        }
    }

    static void Kill(OamBridge bridge)
    {
        using (var p = Process.GetProcessById(bridge.ProcessId)) p.Kill();
    }

    static void TestRestartOnCrash()
    {
        current = "restartOnCrash off (the default): a crashed bridge stays dead";
        var oam = new OamBridgeBehaviour { dontDestroyOnLoad = false };
        Check(!oam.restartOnCrash, "restartOnCrash is on by default");
        Message(oam, "Awake");
        var first = oam.Bridge;
        try
        {
            bool exited = false;
            first.Exited += e => exited = true;
            Kill(first);
            FramesUntil(oam, () => exited, 0f);
            Check(exited, "Exited was not raised");
            FramesUntil(oam, () => false, 1f, 100); // 100 s later
            Check(oam.Bridge == first, "restarted although restartOnCrash is off");
        }
        finally
        {
            Message(oam, "OnDestroy");
        }

        current = "restartOnCrash on: a new bridge after a crash, with the tools, and BridgeRestarted";
        oam = new OamBridgeBehaviour { dontDestroyOnLoad = false, restartOnCrash = true };
        Message(oam, "Awake");
        first = oam.Bridge;
        OamBridge second = null;
        try
        {
            first.RegisterTool("open_gate", "Open a gate.", null, args => "opened");
            var restarts = new System.Collections.Generic.List<OamBridge>();
            oam.BridgeRestarted += b => restarts.Add(b);
            Kill(first);
            FramesUntil(oam, () => restarts.Count > 0, 0.1f);
            Check(restarts.Count == 1 && oam.Bridge == restarts[0] && oam.Bridge != first,
                "no restart (BridgeRestarted " + restarts.Count + ")");
            second = oam.Bridge;
            Check(OamBridgeBehaviour.Instance == oam, "Instance changed");
            if (Pings(oam))
            {
                var session = oam.Bridge.CreateSessionAsync(tools: new[] { "open_gate" }, model: O().With("type", "scripted")
                    .With("steps", new System.Collections.Generic.List<object> {
                        O().With("toolCalls", new System.Collections.Generic.List<object> { O().With("name", "open_gate").With("arguments", O()) }),
                        O().With("template", "{toolOutput}") }));
                Exception error = Frames(oam, session);
                Check(error == null, "session/create on the new bridge: " + error);
                if (error == null)
                {
                    var turn = session.Result.RespondAsync("Open it.");
                    error = Frames(oam, turn);
                    Check(error == null && turn.Result.GetString("text") == "opened", "the tool on the new bridge: " + error);
                }
            }

            current = "OnDestroy ends the restarted bridge, and none starts after it";
            Message(oam, "OnDestroy");
            Check(second.HasExited, "the restarted bridge still runs");
            FramesUntil(oam, () => false, 1f, 50);
            Check(oam.Bridge == second, "a bridge was started after OnDestroy");
        }
        finally
        {
            Message(oam, "OnDestroy");
            if (second != null) second.Dispose();
        }
    }

    // Runs in the domain the test unloads: the play-mode scene's bridge object after Awake and a few frames.
    static void StartInReloadedDomain()
    {
        var oam = new OamBridgeBehaviour();
        Message(oam, "Awake");
        Message(oam, "Update");
        AppDomain.CurrentDomain.SetData("pid", oam.Bridge.ProcessId);
    }

    static bool Alive(int pid)
    {
        try
        {
            using (var p = Process.GetProcessById(pid)) return !p.HasExited;
        }
        catch (ArgumentException) { return false; }
        catch (InvalidOperationException) { return false; }
    }

    static void TestSceneUnloadMidTurn()
    {
        current = "the scene unloads mid-turn (a scene-bound bridge object is destroyed)";
        var oam = new OamBridgeBehaviour { dontDestroyOnLoad = false };
        Message(oam, "Awake");
        try
        {
            var npc = oam.Bridge.CreateNpcAsync(O().With("name", "Gorm"), model: O().With("type", "scripted").With("steps",
                new System.Collections.Generic.List<object> { O().With("text", "[calm] Never said.").With("delayMs", 30000) })
                .With("options", O()));
            Exception error = Frames(oam, npc);
            Check(error == null, "npc/create: " + error);
            if (error != null) return;
            var lines = new System.Collections.Generic.List<string>();
            var talk = npc.Result.TalkAsync("Hello?", onLine: lines.Add);
            Message(oam, "Update");
            Message(oam, "OnDestroy");
            // The awaiting script hears of it although nothing pumps the destroyed behaviour's queue any more.
            var watch = Stopwatch.StartNew();
            while (!talk.IsCompleted && watch.ElapsedMilliseconds < 15000) Thread.Sleep(1);
            var closed = talk.IsFaulted ? talk.Exception.InnerException as OamBridgeException : null;
            Check(closed != null && closed.Message == "The bridge was closed.", "the turn: " + talk.Status + " " + talk.Exception);
            Check(lines.Count == 0, "lines after the unload: " + string.Join("|", lines.ToArray()));
        }
        finally
        {
            Message(oam, "OnDestroy");
        }
    }

    static void TestPlayModeTwice()
    {
        // Enter Play Mode Options with the domain reload off: statics survive from one play session to the next.
        for (int session = 1; session <= 2; session++)
        {
            current = "play mode, time " + session + " (domain reload off)";
            var oam = new OamBridgeBehaviour();
            Message(oam, "Awake");
            Message(oam, "OnEnable");
            Check(OamBridgeBehaviour.Instance == oam, "Instance is not this play session's behaviour");
            Check(!UnityEngine.Object.DestroyCalls.Contains(oam.gameObject), "this session's behaviour was destroyed as a copy");
            Pings(oam);
            var bridge = OwnBridge(oam);
            Message(oam, "OnApplicationQuit"); // leaving play mode
            Message(oam, "OnDisable");
            Message(oam, "OnDestroy");
            Check(bridge != null && bridge.HasExited, "the bridge still runs after play mode ended");
            Check(OamBridgeBehaviour.Instance == null, "Instance outlived play mode");
        }
    }

    static void TestDomainReload()
    {
        current = "a domain reload (scripts recompiled in play mode) ends the bridge";
        // Unity unloads the scripts' domain without OnDestroy: the bridge process was left running for nobody.
        var domain = AppDomain.CreateDomain("reloaded scripts", null, AppDomain.CurrentDomain.SetupInformation);
        domain.DoCallBack(StartInReloadedDomain);
        int pid = (int)domain.GetData("pid");
        Check(Alive(pid), "the bridge did not start");
        AppDomain.Unload(domain);
        bool alive = Alive(pid);
        Check(!alive, "the bridge " + pid + " still runs after the domain was unloaded");
        if (alive) using (var p = Process.GetProcessById(pid)) p.Kill();

        current = "after a domain reload Unity calls OnEnable, not Awake";
        // The behaviour is deserialized into the new domain: its bridge field and the static list are empty.
        var reloaded = new OamBridgeBehaviour();
        try
        {
            Message(reloaded, "OnEnable");
            Check(OamBridgeBehaviour.Instance == reloaded, "Instance is null after the reload (scripts get NullReferenceException)");
            Check(OwnBridge(reloaded) != null, "the reloaded behaviour did not start its bridge");
            if (OamBridgeBehaviour.Instance == reloaded) Pings(reloaded);
            Message(reloaded, "OnDisable");
            Message(reloaded, "OnEnable"); // the game turns the object off and on: nothing restarts
            Check(OamBridgeBehaviour.Instance == reloaded && OwnBridge(reloaded) != null && !OwnBridge(reloaded).HasExited,
                "turning the object off and on changed the bridge");
        }
        finally
        {
            Message(reloaded, "OnDestroy");
        }
        Check(OamBridgeBehaviour.Instance == null, "Instance is a destroyed behaviour");
    }

    static int Main()
    {
        try { TestExtraArguments(); }
        catch (Exception e)
        {
            failures++;
            Console.Error.WriteLine("FAIL " + current + ": " + e);
        }
        try { TestAwakeOrder(); }
        catch (Exception e)
        {
            failures++;
            Console.Error.WriteLine("FAIL " + current + ": " + e);
        }
        try { TestSceneReloaded(); }
        catch (Exception e)
        {
            failures++;
            Console.Error.WriteLine("FAIL " + current + ": " + e);
        }
        try { TestRestartOnCrash(); }
        catch (Exception e)
        {
            failures++;
            Console.Error.WriteLine("FAIL " + current + ": " + e);
        }
        try { TestSceneUnloadMidTurn(); }
        catch (Exception e)
        {
            failures++;
            Console.Error.WriteLine("FAIL " + current + ": " + e);
        }
        try { TestPlayModeTwice(); }
        catch (Exception e)
        {
            failures++;
            Console.Error.WriteLine("FAIL " + current + ": " + e);
        }
        try { TestDomainReload(); }
        catch (Exception e)
        {
            failures++;
            Console.Error.WriteLine("FAIL " + current + ": " + e);
        }
        try { TestSceneBound(); }
        catch (Exception e)
        {
            failures++;
            Console.Error.WriteLine("FAIL " + current + ": " + e);
        }
        Console.WriteLine(checks + " checks, " + failures + " failures");
        return failures == 0 ? 0 : 1;
    }
}
