// UnityEngineStub.cs - the few UnityEngine members OamBridgeBehaviour.cs uses, so CI can compile the adapter
// with mcs without Unity. Not part of the binding; never ship it.
using System;

namespace UnityEngine
{
    public class Object
    {
        public static void DontDestroyOnLoad(Object target) { }
    }

    public class GameObject : Object { }

    public class Component : Object
    {
        public GameObject gameObject { get { return null; } }
    }

    public class Behaviour : Component { }

    public class MonoBehaviour : Behaviour { }

    public static class Debug
    {
        public static void Log(object message) { Console.WriteLine(message); }
        public static void LogWarning(object message) { Console.Error.WriteLine(message); }
        public static void LogError(object message) { Console.Error.WriteLine(message); }
        public static void LogException(Exception exception) { Console.Error.WriteLine(exception); }
    }

    [AttributeUsage(AttributeTargets.Field)]
    public sealed class TooltipAttribute : Attribute
    {
        public TooltipAttribute(string tooltip) { }
    }
}
