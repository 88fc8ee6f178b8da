// OamBridgeBehaviour.cs - a thin MonoBehaviour around OamBridge (OpenAppleModels.cs).
//
// Add it to a GameObject (one per scene or a DontDestroyOnLoad singleton). It starts the bridge in Awake (or
// when another script reads Bridge first: Unity does not order Awake across scripts), pumps callbacks on the main
// thread in Update, and shuts the bridge down in OnDestroy / OnApplicationQuit; after that, calls fail with
// OamBridgeException -32023 "The bridge was closed.". Register tools in Awake of your own scripts (before they
// are used) and await the async API:
//
//     var oam = GetComponent<OamBridgeBehaviour>();
//     oam.Bridge.RegisterTool("open_gate", "Open a named gate.", gateSchema, args => OpenGate(args.GetString("gate")));
//     var guard = await oam.Bridge.CreateSessionAsync("You are a castle guard.", new[] { "open_gate" });
//     var reply = await guard.RespondAsync("Open the north gate.", onText: text => label.text = text);

using System;
using UnityEngine;

namespace OpenAppleModels
{
    public sealed class OamBridgeBehaviour : MonoBehaviour
    {
        [Tooltip("Path of the compiled `oam` executable. Empty: OAM_BRIDGE_COMMAND / OAM_BRIDGE_PATH / `oam` on PATH.")]
        public string bridgePath = "";

        [Tooltip("Extra arguments after `stdio`, e.g. --tool-timeout 30 (also appended to OAM_BRIDGE_COMMAND / OAM_BRIDGE_PATH / `oam`).")]
        public string extraArguments = "";

        [Tooltip("Keep the bridge alive across scene loads.")]
        public bool dontDestroyOnLoad = true;

        readonly OamMainThreadQueue queue = new OamMainThreadQueue();

        OamBridge bridge;

        /// <summary>
        /// The bridge, started on first use (also from another script's Awake that runs before this one). If it could
        /// not start, the error is logged and every request fails with it.
        /// </summary>
        public OamBridge Bridge
        {
            get
            {
                if (bridge == null) Create();
                return bridge;
            }
        }

        void Awake()
        {
            if (dontDestroyOnLoad) DontDestroyOnLoad(gameObject);
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
            bridge = new OamBridge(command, queue);
            bridge.LogReceived += line => Debug.LogWarning("[open-apple-models] " + line);
            try
            {
                bridge.Start();
            }
            catch (OamBridgeException e)
            {
                Debug.LogError(e.Message);
            }
        }

        void Update()
        {
            queue.Pump();
        }

        void OnApplicationQuit()
        {
            Shutdown();
        }

        void OnDestroy()
        {
            Shutdown();
        }

        void Shutdown()
        {
            if (bridge == null) return;
            bridge.Dispose(); // kept: later calls fail with "The bridge was closed." rather than a NullReferenceException
            queue.Pump(); // deliver the shut_down errors to awaiting code
        }
    }
}
