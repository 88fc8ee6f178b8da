// OamBridgeBehaviour.cs - a thin MonoBehaviour around OamBridge (OpenAppleModels.cs).
//
// Add it to a GameObject (one per scene or a DontDestroyOnLoad singleton). It starts the bridge in Awake,
// pumps callbacks on the main thread in Update, and shuts the bridge down in OnDestroy / OnApplicationQuit.
// Register tools in Awake of your own scripts (before they are used) and await the async API:
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

        [Tooltip("Extra arguments after `stdio`, e.g. --tool-timeout 30.")]
        public string extraArguments = "";

        [Tooltip("Keep the bridge alive across scene loads.")]
        public bool dontDestroyOnLoad = true;

        readonly OamMainThreadQueue queue = new OamMainThreadQueue();

        /// <summary>The bridge; valid after Awake.</summary>
        public OamBridge Bridge { get; private set; }

        void Awake()
        {
            if (dontDestroyOnLoad) DontDestroyOnLoad(gameObject);
            queue.OnError = Debug.LogException;
            string[] command = null;
            if (!string.IsNullOrEmpty(bridgePath))
            {
                string arguments = "stdio " + (extraArguments ?? "");
                var rest = arguments.Split(new[] { ' ' }, StringSplitOptions.RemoveEmptyEntries);
                command = new string[rest.Length + 1];
                command[0] = bridgePath;
                Array.Copy(rest, 0, command, 1, rest.Length);
            }
            Bridge = new OamBridge(command, queue);
            Bridge.LogReceived += line => Debug.LogWarning("[open-apple-models] " + line);
            try
            {
                Bridge.Start();
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
            if (Bridge == null) return;
            Bridge.Dispose();
            queue.Pump(); // deliver the shut_down errors to awaiting code
            Bridge = null;
        }
    }
}
