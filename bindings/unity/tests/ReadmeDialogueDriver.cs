// ReadmeDialogueDriver.cs - plays the README's Blacksmith.cs ("An NPC's dialogue script in Unity") the way Unity
// would: the bridge object's Awake, the NPC's Start, Update every frame, code after await resumed on the main thread
// by a SynchronizationContext pumped each frame (as Unity's is), an exception leaving an async void method logged.
// Built with the README's block by tests/bindings/csharp_test.ts; the bridge runs OAM_SCRIPT (see there).

using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Reflection;
using System.Threading;
using OpenAppleModels;
using UnityEngine.UI;

static class ReadmeDialogueDriver
{
    // Unity's UnitySynchronizationContext: continuations posted here run in the next frame, on the main thread.
    sealed class FrameContext : SynchronizationContext
    {
        readonly Queue<KeyValuePair<SendOrPostCallback, object>> posted = new Queue<KeyValuePair<SendOrPostCallback, object>>();

        public override void Post(SendOrPostCallback d, object state)
        {
            lock (posted) posted.Enqueue(new KeyValuePair<SendOrPostCallback, object>(d, state));
        }

        public void Run()
        {
            while (true)
            {
                KeyValuePair<SendOrPostCallback, object> next;
                lock (posted)
                {
                    if (posted.Count == 0) return;
                    next = posted.Dequeue();
                }
                try { next.Key(next.Value); }
                catch (Exception e) { UnityEngine.Debug.LogException(e); } // an exception that left an async void
            }
        }
    }

    static readonly FrameContext context = new FrameContext();
    static OamBridgeBehaviour oam;

    static void Message(object target, string name)
    {
        var method = target.GetType().GetMethod(name, BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public);
        if (method != null) method.Invoke(target, null);
    }

    static void Frame()
    {
        Message(oam, "Update");
        context.Run();
        Thread.Sleep(1);
    }

    // Frames until done() (a hang guard of 15 s wall clock, not a timed assertion).
    static bool FramesUntil(Func<bool> done)
    {
        var watch = Stopwatch.StartNew();
        while (!done())
        {
            if (watch.ElapsedMilliseconds > 15000) return false;
            Frame();
        }
        return true;
    }

    static int failures;

    static void Check(bool condition, string what)
    {
        if (condition) return;
        failures++;
        Console.Error.WriteLine("FAIL " + what);
    }

    static int Main()
    {
        SynchronizationContext.SetSynchronizationContext(context);
        oam = new OamBridgeBehaviour();
        Message(oam, "Awake");
        var smith = new Blacksmith { speech = new Text() };
        Message(smith, "Start");
        var gorm = typeof(Blacksmith).GetField("gorm", BindingFlags.Instance | BindingFlags.NonPublic);
        Check(FramesUntil(() => gorm.GetValue(smith) != null), "the NPC was not created");

        // The script's first reply is spoken; the second one is slow: the player walks away from it.
        smith.Say("Any swords?");
        Check(FramesUntil(() => smith.speech.text == "Finest steel in the valley."), "first line: " + smith.speech.text);
        var talking = typeof(Blacksmith).GetField("talking", BindingFlags.Instance | BindingFlags.NonPublic);
        smith.Say("And axes?");
        Frame();
        smith.PlayerLeft();
        // Say's finally clears `talking` once the cancelled TalkAsync has ended (caught, not logged).
        Check(FramesUntil(() => talking.GetValue(smith) == null), "the walked-away turn did not end");
        Check(smith.speech.text == "Finest steel in the valley.", "after walking away: " + smith.speech.text);

        // The scene changes mid-line: the NPC, then the bridge object are destroyed.
        smith.Say("Wait!");
        Frame();
        string shown = smith.speech.text;
        Message(smith, "OnDestroy");
        Message(oam, "OnDestroy");
        context.Run();
        Check(smith.speech.text == shown, "a line reached the destroyed label: " + smith.speech.text);
        Check(UnityEngine.Debug.Errors == 0, UnityEngine.Debug.Errors + " errors logged");
        Console.WriteLine(failures == 0 ? "dialogue ok" : failures + " failures");
        return failures == 0 ? 0 : 1;
    }
}
