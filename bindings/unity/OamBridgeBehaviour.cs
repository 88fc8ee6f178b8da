// OamBridgeBehaviour.cs - a thin MonoBehaviour around OamBridge (OpenAppleModels.cs).
//
// Add it to a root GameObject. It starts the bridge in Awake (or when another script reads Bridge first: Unity
// does not order Awake across scripts unless told to, see DefaultExecutionOrder below), pumps callbacks on the
// main thread in Update, and shuts the bridge down in OnDestroy / OnApplicationQuit; after that, calls fail with
// OamBridgeException -32023 "The bridge was closed.".
//
// One bridge for the game (dontDestroyOnLoad on, the default): the behaviour survives scene loads, and when a
// scene that also holds a bridge object is loaded (the first scene again, another scene with the same prefab),
// that copy destroys its GameObject in Awake without starting a bridge; until it is gone, its Bridge is the live
// one. Find the live behaviour with OamBridgeBehaviour.Instance.
// One bridge per scene (dontDestroyOnLoad off): each behaviour runs its own bridge and shuts it down with its
// scene, also when several scenes are loaded at once (additively); Instance is the one that started first.
//
// A bridge that ends by itself (a crash, a kill) stays dead unless restartOnCrash is on (read when the bridge starts):
// then OamBridgeRestarter starts a new one after 1 s, 2 s, 4 s (restartBackoffSeconds, doubled), at most maxRestarts
// times in a row, with the tools registered so far; sessions, NPCs and worlds were in the old process: create them
// again in BridgeRestarted. A bridge that could not start at all (wrong command) is not retried.
//
// A domain reload (scripts recompiled in play mode) shuts the bridge down as the old scripts unload (Unity sends no
// OnDestroy then); the reloaded behaviour starts a new one in OnEnable, without the old sessions, NPCs and worlds.
//
// Register tools in Awake of your own scripts (before they are used) and await the async API:
//
//     var oam = OamBridgeBehaviour.Instance;   // or GetComponent<OamBridgeBehaviour>() on the same object
//     oam.Bridge.RegisterTool("open_gate", "Open a named gate.", gateSchema, args => OpenGate(args.GetString("gate")));
//     var guard = await oam.Bridge.CreateSessionAsync("You are a castle guard.", new[] { "open_gate" });
//     var reply = await guard.RespondAsync("Open the north gate.", onText: text => label.text = text);

using System;
using System.Collections.Generic;
using UnityEngine;

namespace OpenAppleModels
{
    // Runs Awake (and Update) before scripts of the default order in the same scene load, so that their Awake
    // finds Instance set.
    [DefaultExecutionOrder(-1000)]
    public sealed class OamBridgeBehaviour : MonoBehaviour
    {
        [Tooltip("Path of the compiled `oam` executable. Empty: OAM_BRIDGE_COMMAND / OAM_BRIDGE_PATH / `oam` on PATH.")]
        public string bridgePath = "";

        [Tooltip("Extra arguments after `stdio`, e.g. --tool-timeout 30 (also appended to OAM_BRIDGE_COMMAND / OAM_BRIDGE_PATH / `oam`).")]
        public string extraArguments = "";

        [Tooltip("Keep the bridge alive across scene loads, as the one bridge of the game: a copy in a scene loaded later destroys itself.")]
        public bool dontDestroyOnLoad = true;

        [Tooltip("Start a new bridge when the process ends by itself (a crash, a kill), after 1 s, 2 s, 4 s ... (restartBackoffSeconds, doubled), at most maxRestarts times in a row. Registered tools carry over; sessions, NPCs and worlds do not: re-create them in BridgeRestarted.")]
        public bool restartOnCrash = false;

        [Tooltip("With restartOnCrash: restarts in a row before giving up (a bridge that ran 60 s before it ended starts a new count).")]
        public int maxRestarts = 3;

        [Tooltip("With restartOnCrash: the wait before the first restart in a row, doubled for each next one.")]
        public float restartBackoffSeconds = 1f;

        /// <summary>
        /// With restartOnCrash: a new bridge replaced the one that ended by itself (Bridge returns it from now on).
        /// Its tools are those registered on the old one; sessions, NPCs, worlds, world subscriptions and handlers of
        /// the old bridge's events are gone: create them again here. On the main thread, in Update.
        /// </summary>
        public event Action<OamBridge> BridgeRestarted;

        // Behaviours that have awoken and are not destroyed, oldest first (duplicates never enter).
        static readonly List<OamBridgeBehaviour> live = new List<OamBridgeBehaviour>();

        readonly OamMainThreadQueue queue = new OamMainThreadQueue();

        OamBridge bridge;
        OamBridgeRestarter restarter; // with restartOnCrash

        /// <summary>
        /// The live behaviour: the one with dontDestroyOnLoad on, else the first of the scene-bound ones still
        /// there; null before any has awoken (its Awake runs before default-order scripts' Awake in the same scene
        /// load) and once all are destroyed.
        /// </summary>
        public static OamBridgeBehaviour Instance
        {
            get
            {
                var persistent = Persistent();
                if (persistent != null) return persistent;
                return live.Count > 0 ? live[0] : null;
            }
        }

        static OamBridgeBehaviour Persistent()
        {
            foreach (var behaviour in live) if (behaviour.dontDestroyOnLoad) return behaviour;
            return null;
        }

        // The live persistent behaviour this one would duplicate, or null.
        OamBridgeBehaviour Original()
        {
            if (!dontDestroyOnLoad || live.Contains(this)) return null;
            return Persistent();
        }

        /// <summary>
        /// The bridge, started on first use (also from another script's Awake that runs before this one). If it could
        /// not start, the error is logged and every request fails with it. On a copy that destroys itself (see
        /// dontDestroyOnLoad), the live behaviour's bridge.
        /// </summary>
        public OamBridge Bridge
        {
            get
            {
                if (bridge != null) return bridge;
                var original = Original();
                if (original != null) return original.Bridge;
                Create();
                return bridge;
            }
        }

        bool isCopy; // destroyed in Awake as a copy of the live one

        void Awake()
        {
            if (Original() != null)
            {
                // A scene with the bridge object was loaded again: the live one stays, this copy goes before it
                // starts anything (OnDestroy then has nothing to shut down).
                isCopy = true;
                Destroy(gameObject);
                return;
            }
            live.Add(this);
            if (dontDestroyOnLoad) DontDestroyOnLoad(gameObject);
            if (bridge == null) Create();
        }

        // After a domain reload in play mode (scripts recompiled with "Recompile And Continue Playing") Unity
        // deserializes the behaviour and calls OnEnable, not Awake: the static list and the bridge field are empty
        // (the old domain's bridge was shut down as it unloaded), so it registers again and starts a new bridge. The
        // sessions, NPCs and worlds were in the old process. Otherwise (after Awake, or the object turned off and on)
        // nothing changes.
        void OnEnable()
        {
            if (isCopy || live.Contains(this) || Original() != null) return;
            live.Add(this);
            if (bridge == null) Create();
        }

        void Create()
        {
            queue.OnError = Debug.LogException;
            var extra = (extraArguments ?? "").Split(new[] { ' ', '\t' }, StringSplitOptions.RemoveEmptyEntries);
            string[] command = null;
            if (!string.IsNullOrEmpty(bridgePath))
            {
                command = new string[extra.Length + 2];
                command[0] = bridgePath;
                command[1] = "stdio";
                Array.Copy(extra, 0, command, 2, extra.Length);
            }
            else if (extra.Length > 0)
            {
                string[] resolved = OamBridge.ResolveCommand(null);
                command = new string[resolved.Length + extra.Length];
                Array.Copy(resolved, command, resolved.Length);
                Array.Copy(extra, 0, command, resolved.Length, extra.Length);
            }
            bridge = NewBridge(command);
            try
            {
                bridge.Start();
            }
            catch (OamBridgeException e)
            {
                Debug.LogError(e.Message);
                return; // not restarted: the command is wrong, not the bridge
            }
            if (!restartOnCrash) return;
            restarter = new OamBridgeRestarter(bridge, () => NewBridge(command), maxRestarts, restartBackoffSeconds);
            restarter.Restarted += next =>
            {
                bridge = next;
                Debug.LogWarning("[open-apple-models] The bridge was restarted (" + restarter.RestartsInARow +
                    " in a row).");
                var restarted = BridgeRestarted;
                if (restarted != null) restarted(next);
            };
            restarter.GaveUp += error => Debug.LogError("[open-apple-models] The bridge ended again after " + maxRestarts +
                " restarts in a row; it is not restarted any more.");
        }

        OamBridge NewBridge(string[] command)
        {
            var created = new OamBridge(command, queue);
            created.LogReceived += line => Debug.LogWarning("[open-apple-models] " + line);
            created.Exited += error => Debug.LogError("[open-apple-models] " + error.Message);
            return created;
        }

        void Update()
        {
            queue.Pump();
            // Before a restart, Pump has delivered the old bridge's Exited and failed its requests.
            if (restarter != null) restarter.Tick(Time.realtimeSinceStartup);
        }

        void OnApplicationQuit()
        {
            Shutdown();
        }

        void OnDestroy()
        {
            live.Remove(this);
            Shutdown();
        }

        void Shutdown()
        {
            if (restarter != null) restarter.Stop();
            if (bridge == null) return;
            // Waits on the main thread (a few ms; 0.5 s and a kill for a frozen bridge that answers nothing; at most
            // ~3 s and a kill for one that still answers but does not exit): a wait moved to another thread could be
            // cut off by the quit (or a domain reload) and leave a frozen bridge running.
            bridge.Dispose(); // kept: later calls fail with "The bridge was closed." rather than a NullReferenceException
            queue.Pump(); // deliver the shut_down errors to awaiting code
        }
    }
}
