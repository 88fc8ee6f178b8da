// UnityEngineStub.cs - the few UnityEngine members OamBridgeBehaviour.cs and the README's Unity scripts use, so CI
// can compile them with mcs without Unity. Not part of the binding; never ship it.
using System;

namespace UnityEngine
{
    public class Object
    {
        /// <summary>What Destroy was called on (Unity destroys at the end of the frame; tests send OnDestroy).</summary>
        public static readonly System.Collections.Generic.List<Object> DestroyCalls = new System.Collections.Generic.List<Object>();

        /// <summary>What DontDestroyOnLoad was called on.</summary>
        public static readonly System.Collections.Generic.List<Object> DontDestroyOnLoadCalls = new System.Collections.Generic.List<Object>();

        public static void DontDestroyOnLoad(Object target) { DontDestroyOnLoadCalls.Add(target); }

        public static void Destroy(Object target) { DestroyCalls.Add(target); }
    }

    public class GameObject : Object { }

    public class Component : Object
    {
        GameObject owner;

        public GameObject gameObject { get { return owner ?? (owner = new GameObject()); } }
    }

    public class Behaviour : Component { }

    public class MonoBehaviour : Behaviour { }

    public static class Time
    {
        /// <summary>Seconds since the game started; the tests set it (Unity's is read-only).</summary>
        public static float realtimeSinceStartup { get; set; }
    }

    public static class Debug
    {
        /// <summary>How many errors and exceptions were logged (the tests count them; Unity has no such member).</summary>
        public static int Errors;

        public static void Log(object message) { Console.WriteLine(message); }
        public static void LogWarning(object message) { Console.Error.WriteLine(message); }
        public static void LogError(object message) { Errors++; Console.Error.WriteLine(message); }
        public static void LogException(Exception exception) { Errors++; Console.Error.WriteLine(exception); }
    }

    [AttributeUsage(AttributeTargets.Class)]
    public sealed class DefaultExecutionOrder : Attribute
    {
        public DefaultExecutionOrder(int order) { }
    }

    [AttributeUsage(AttributeTargets.Field)]
    public sealed class TooltipAttribute : Attribute
    {
        public TooltipAttribute(string tooltip) { }
    }
}

namespace UnityEngine.UI
{
    public class Text : Component
    {
        public string text { get; set; }
    }
}
