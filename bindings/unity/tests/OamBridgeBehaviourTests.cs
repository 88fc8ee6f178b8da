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
        typeof(OamBridgeBehaviour).GetMethod(name, BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public)
            .Invoke(behaviour, null);
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
        Console.WriteLine(checks + " checks, " + failures + " failures");
        return failures == 0 ? 0 : 1;
    }
}
