"""open_apple_models: an asyncio client for the open-apple-models bridge.

Spawns the bridge (``oam stdio``, or ``deno run ... cli.ts stdio``) and speaks its JSON-RPC 2.0
protocol over the child's stdin/stdout. Standard library only (Python 3.8+).

Example::

    import asyncio
    from open_apple_models import Bridge

    async def main():
        async with Bridge() as bridge:

            @bridge.tool(description="Open a named gate. Returns whether it opened.",
                         parameters={"type": "object", "properties": {"gate": {"type": "string"}},
                                     "required": ["gate"]})
            async def open_gate(args):
                return {"opened": True, "gate": args["gate"]}

            guard = await bridge.create_session(
                instructions="You are a castle guard. Use tools to act.",
                tools=["open_gate"], options={"toolChoice": "required"})
            result = await guard.respond("Please open the north gate.", on_text=print)
            print(result["text"])

    asyncio.run(main())

Which bridge is started: ``Bridge(command=[...])`` (an argv list, or a string split on whitespace),
else the environment: ``OAM_BRIDGE_COMMAND`` (whole command line, split on whitespace),
``OAM_BRIDGE_PATH`` (path of a compiled ``oam``; runs ``<path> stdio``), else ``oam stdio`` from PATH.

The bridge is started with ``OAM_EXIT_WITH_PARENT=1`` unless the variable is already set (in ``env`` when
given, else in ``os.environ``): when this process is killed or crashes, the bridge cancels its turns and exits
instead of running them on for nobody (Linux and macOS). ``env={..., "OAM_EXIT_WITH_PARENT": "0"}`` (or the
variable set to ``0`` in the environment) turns that off.

Values are sent as JSON: a tuple or set goes as a list, a Decimal as a number, a dataclass as a dict, an int
dict key as its digits, a :class:`Session`, :class:`Npc`, :class:`World` or :class:`Subscription` as its id.
What the bridge could not read, or would change, is refused before anything is sent, and the error names the
call and the path (``world.set('quest.reward'): the value is an int beyond 2**53 (…), which the bridge would
round …; pass str(n) …``, ``bridge.generate(): context['player']['hp'] is nan, …``): an int beyond 2**53, NaN
or infinity, a value that contains itself, dict keys that would collide (``ValueError``); a datetime, bytes, an
Enum member, any other object, a Python type in a schema (``{"type": int}``: JSON Schema writes it
``"integer"``), a coroutine never awaited, a dict key that is not a str, int or float (``TypeError``, saying
what to pass); text with a lone surrogate (a ``ValueError`` naming where it is); a message longer than the
bridge reads (a -32600 ``invalid_message`` :class:`BridgeError`; see ``max_line_bytes``). A tool result refused
so becomes an error output the model sees at once (and a WARNING in the log). What a script passes wrong is a
``TypeError`` that names it, before anything is sent: a callback or tool handler that is not a function, a
world seed (a dict) where a :class:`World` or world id goes, a persona or a world's state given to
``bridge.npc()`` / ``bridge.world()``, an ``actor`` that is not a persona, an :class:`Npc` or an id, decision
``options`` that are not a list, a ``decide_many`` request that is not a dict or holds the call's ``model``.
The warnings of ``generate`` and ``decide_many``, whose results hold no room for them, are logged (logger
``open_apple_models``, WARNING).

Callbacks (``on_text``, ``on_line``, ``on_emotion``, ``on_event``, world subscriptions) and tool
handlers run on the event loop; they may be plain functions or coroutines. A call returns once the coroutines
its callbacks started have finished (a turn's run one at a time, in the order of its events); an exception in a
callback fails the call it belongs to (after its response) and its callbacks get no more events, one in a world
subscription or notification handler is logged. A turn whose task is cancelled (the player walked away) or whose
``timeout`` passes gets no more callbacks from that moment, also for events already read. Sync tool handlers run
directly on the loop, so keep them short (or make them ``async`` / use ``asyncio.to_thread``).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import datetime
import decimal
import enum
import inspect
import itertools
import json
import logging
import math
import os
import sys
from typing import Any, Awaitable, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

__all__ = [
    "Bridge",
    "BridgeError",
    "Npc",
    "Session",
    "Subscription",
    "ToolContext",
    "ToolError",
    "World",
    "bridge_command",
    "bridge_environment",
    "NULL",
    "VERSION",
]

VERSION = "0.1.0"
PROTOCOL_VERSION = "1.0"


class _Null:
    """The type of :data:`NULL`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NULL"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "NULL"


NULL: Any = _Null()
"""Sends JSON ``null`` where a keyword argument's ``None`` leaves the parameter out. Use it where the bridge
gives ``null`` a meaning of its own: ``restore_npc(save, world=NULL)`` restores without the saved world (and
``tools=NULL`` / ``options=NULL`` / ``npc=NULL`` without the saved tools, with default options, under a new
id); ``create_session(NULL, history=saved, tools=NULL)`` resumes without the saved instructions and tools.
Elsewhere the bridge reads ``null`` as absent."""

logger = logging.getLogger("open_apple_models")

JSON = Any
Callback = Callable[..., Any]

#: Largest line the client accepts from the bridge (transcripts and saves can be large).
LINE_LIMIT = 64 * 1024 * 1024

#: Longest line the bridge reads by default (``oam stdio --max-line-bytes``). A longer message is refused
#: before it is sent: the bridge would skip it and answer with no id, so the call would never finish.
MAX_LINE_BYTES = 16 * 1024 * 1024

#: Lines of the bridge's stderr (the last ones that are not blank) that the error of a bridge that exits by itself
#: ends with.
EXIT_LOG_LINES = 3

SHUT_DOWN = -32023
TIMEOUT = -32024
CANCELLED = -32009


class BridgeError(Exception):
    """A JSON-RPC error from the bridge (or produced by this client for it).

    ``code`` is the JSON-RPC number (e.g. -32020), ``data_code`` the stable string
    (e.g. ``"session_not_found"``), ``data`` the whole ``error.data`` object.
    """

    def __init__(self, code: int, data_code: str, message: str, data: Optional[Dict[str, Any]] = None):
        super().__init__(message)
        self.code = code
        self.data_code = data_code
        self.message = message
        self.data = data if data is not None else {"code": data_code}

    @classmethod
    def from_error(cls, error: Any) -> "BridgeError":
        """Builds the exception from a JSON-RPC ``error`` object."""
        if not isinstance(error, dict):
            return cls(-32603, "internal_error", "Malformed error response: %r" % (error,))
        data = error.get("data") if isinstance(error.get("data"), dict) else {}
        code = error.get("code") if isinstance(error.get("code"), int) else -32603
        return cls(code, str(data.get("code", "")), str(error.get("message", "")), data)

    def __str__(self) -> str:
        return "%s (%d %s)" % (self.message, self.code, self.data_code)

    def __repr__(self) -> str:
        return "BridgeError(%d, %r, %r)" % (self.code, self.data_code, self.message)


class ToolError(Exception):
    """Raise from a tool handler to return an error output (``isError: true``) with this message.

    Any other exception does the same, with the exception's type name in front of the message, and is logged
    with its traceback (logger ``open_apple_models``, level WARNING: on stderr unless logging is configured).
    """


@dataclasses.dataclass
class ToolContext:
    """What a tool handler may want to know about the call (pass a second parameter to receive it)."""

    name: str
    call_id: str
    request_id: Any
    session: Optional[str] = None
    npc: Optional[str] = None
    index: Optional[int] = None
    params: Dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class _Tool:
    name: str
    handler: Callback
    definition: Dict[str, Any]
    wants_context: bool


class _Events:
    """Whether a request's event callbacks still get events: not once its turn was given up (the awaiting task
    cancelled, its timeout passed) nor once one of them raised."""

    __slots__ = ("stopped", "waiting")

    def __init__(self) -> None:
        self.stopped = False
        self.waiting: Optional["asyncio.Future[Any]"] = None  # what the turn's task awaits; cancelled with it

    def given_up(self) -> bool:
        return self.stopped or (self.waiting is not None and self.waiting.cancelled())


class _Pending:
    """A request waiting for its response."""

    __slots__ = ("future", "on_event", "on_result", "callback_error", "callback_tasks", "events", "work")

    def __init__(self, future: "asyncio.Future[Any]", on_event: Optional[Callback], on_result: Optional[Callback],
                 events: Optional[_Events] = None, work: Optional[str] = None):
        self.future = future
        self.work = work  # the NPC or session whose work it is (see _turn_work_of): its cancel() silences it
        self.on_event = on_event
        self.on_result = on_result
        self.callback_error: Optional[BaseException] = None
        self.callback_tasks: List["asyncio.Future[None]"] = []  # coroutine callbacks still running
        self.events = events if events is not None else _Events()


def bridge_command(command: Union[str, Sequence[str], None] = None) -> List[str]:
    """The argv used to start the bridge (see the module docstring)."""
    if command:
        return command.split() if isinstance(command, str) else list(command)
    env_command = os.environ.get("OAM_BRIDGE_COMMAND", "").strip()
    if env_command:
        return env_command.split()
    path = os.environ.get("OAM_BRIDGE_PATH", "").strip()
    argv = [path or "oam", "stdio"]
    log = os.environ.get("OAM_BRIDGE_LOG", "").strip()
    if log:
        argv += ["--log-level", log]
    return argv


EXIT_WITH_PARENT = "OAM_EXIT_WITH_PARENT"


def bridge_environment(env: Optional[Mapping[str, str]] = None) -> Optional[Dict[str, str]]:
    """The environment the bridge is started with: ``env`` (else this process's, inherited) plus
    ``OAM_EXIT_WITH_PARENT=1`` unless the variable is set there already. None means "inherit as it is"."""
    if env is None:
        if EXIT_WITH_PARENT in os.environ:
            return None
        return {**os.environ, EXIT_WITH_PARENT: "1"}
    if EXIT_WITH_PARENT in env:
        return dict(env)
    return {**env, EXIT_WITH_PARENT: "1"}


#: The largest integer a JSON number keeps exactly on the bridge (a JavaScript double): ``2**53 - 1``.
MAX_SAFE_INTEGER = 2 ** 53 - 1

#: The JSON Schema type of a Python type written where a schema's type goes (``{"type": int}``).
_SCHEMA_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean", list: "array", tuple: "array",
                 dict: "object", type(None): "null"}

#: Where a schema is (a tool's ``parameters``, a ``schema``): a Python type there is a JSON Schema type written so.
_SCHEMA_KEYS = frozenset(["schema", "parameters", "properties", "items"])


class _NotJson(Exception):
    """What JSON cannot carry, where: raised by :func:`_to_json`, worded by :func:`_jsonable`."""

    def __init__(self, kind: type, path: List[Any], predicate: str):
        super().__init__(predicate)
        self.kind = kind
        self.path = path
        self.predicate = predicate


def _shown(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


def _schema_type_advice(value: type, path: List[Any]) -> Optional[str]:
    """How to write a Python type found in a schema (``{"type": int}``, ``{"name": str}``), or None."""
    name = _SCHEMA_TYPES.get(value)
    if name is None or not any(isinstance(key, str) and key in _SCHEMA_KEYS for key in path):
        return None
    if path and path[-1] == "type":
        return 'is the Python type %s; JSON Schema writes it "%s"' % (value.__name__, name)
    written = '{"type": "object", "properties": {...}}' if name == "object" else '{"type": "%s"}' % name
    return "is the Python type %s; JSON Schema writes it %s" % (value.__name__, written)


def _as_written(coroutine: Any, qualname: str) -> Any:
    """``coroutine`` named as the call that returned it (``Npc.cancel``, not its ``Npc._cancel`` inside): Python's
    "coroutine ... was never awaited" warning and the refusal of a coroutine passed as a value name that call."""
    coroutine.__qualname__ = qualname
    coroutine.__name__ = qualname.rsplit(".", 1)[-1]
    return coroutine


def _awaitable_advice(value: Any) -> str:
    if inspect.iscoroutine(value):
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", "a coroutine")
        call = name.split(".")
        shown = ".".join([call[0][:1].lower() + call[0][1:]] + call[1:]) if len(call) > 1 else name
        return ("is a coroutine that was never awaited (%s): add await (x = await %s(...)) and pass what it "
                "returns" % (name, shown))
    return "is %s %s that was not awaited: pass its result (await it)" % (_article(type(value).__name__),
                                                                          type(value).__name__)


def _unsendable(value: Any, path: List[Any]) -> "_NotJson":
    """The TypeError for a value JSON has no type for, saying what to pass instead."""
    if isinstance(value, type):
        advice = _schema_type_advice(value, path)
        if advice is not None:
            return _NotJson(TypeError, path, advice)
        return _NotJson(TypeError, path, "is the class %s, not a value" % value.__name__)
    if inspect.isawaitable(value):
        return _NotJson(TypeError, path, _awaitable_advice(value))
    noun = type(value).__name__
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        advice = "pass a string: value.isoformat()"
    elif isinstance(value, datetime.timedelta):
        advice = "pass a number: value.total_seconds()"
    elif isinstance(value, (bytes, bytearray, memoryview)):
        advice = ("pass text: value.decode('utf-8'), or base64 text: base64.b64encode(value).decode('ascii')")
        return _NotJson(TypeError, path, "is %s (%s), which JSON has no type for; %s"
                        % ("bytes" if isinstance(value, bytes) else _article(noun) + " " + noun, _shown(value), advice))
    elif isinstance(value, enum.Enum):
        member = "%s.%s" % (type(value).__name__, value.name)
        return _NotJson(TypeError, path, "is an Enum member (%s), which JSON has no type for; pass its value "
                        "(%s.value) or its name (%s.name)" % (member, member, member))
    else:
        advice = ("pass a dict, a list, a str, a number, a bool or None (dataclasses, sets, tuples and Decimal are "
                  "converted for you)")
    return _NotJson(TypeError, path, "is %s %s (%s), which JSON has no type for; %s"
                    % (_article(noun), noun, _shown(value), advice))


def _json_key(key: Any, path: List[Any]) -> str:
    """A dict key as JSON writes it: a str as it is, an int as its digits, a float as ``json`` writes it."""
    if isinstance(key, str):
        return str.__str__(key)
    if isinstance(key, int) and not isinstance(key, bool):
        return int.__repr__(key)
    if isinstance(key, float) and math.isfinite(key):
        return float.__repr__(key)
    raise _NotJson(TypeError, list(path), "has a key %s (%s %s); JSON object keys are strings: turn the key into one "
                   "yourself (a str, or an int, which is sent as its digits)"
                   % (_shown(key), _article(type(key).__name__), type(key).__name__))


def _plain(item: Any) -> bool:
    """Whether ``item`` is sent as it is: a str, a bool, None, an int within 2**53 or a finite float (exact types:
    the common case, checked without a call)."""
    kind = type(item)
    return (kind is str or item is None or kind is bool
            or (kind is int and -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER) or (kind is float and item - item == 0))


def _int_problem(value: int, path: List[Any]) -> "_NotJson":
    if value.bit_length() > 4000:  # str() refuses ints of more than 4300 digits
        digits = "about 10**%d" % int(value.bit_length() * math.log10(2))
    else:
        digits = str(value) if len(str(value)) <= 40 else str(value)[:37] + "..."
    return _NotJson(ValueError, list(path), "is an int beyond 2**53 (%s), which the bridge would round (its numbers "
                    "are doubles); pass str(n) to keep every digit, or float(n) if rounding is fine" % digits)


def _to_json(value: Any, path: List[Any], inside: Dict[int, int]) -> JSON:
    """``value`` as JSON data (see :func:`_jsonable`); raises :class:`_NotJson` at the first value JSON cannot carry.
    ``path`` is where ``value`` is (keys and indexes; appended to and popped on the way), ``inside`` the containers
    being walked (a value that contains itself)."""
    kind = type(value)
    if kind is not dict and kind is not list:  # the common containers go straight to the walk below
        return _to_json_leaf(value, path, inside)
    return _walk(value, path, inside)


def _to_json_leaf(value: Any, path: List[Any], inside: Dict[int, int]) -> JSON:
    """:func:`_to_json` of anything but an exact dict or list."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
            return value
        raise _int_problem(value, path)
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise _NotJson(ValueError, list(path), "is %r, which JSON cannot send; pass a finite number (or None)" % value)
    if value is NULL:
        return None
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise _NotJson(ValueError, list(path), "is %r, which JSON cannot send; pass a finite number (or None)"
                           % value)
        if value == value.to_integral_value():
            return _to_json(int(value), path, inside)
        return float(value)
    if isinstance(value, (Session, Npc, World, Subscription)):  # a handle stands for its id (decide(actor=gorm))
        return value.id
    container = isinstance(value, (Mapping, list, tuple, set, frozenset)) or (
        dataclasses.is_dataclass(value) and not isinstance(value, type))
    if not container:
        if callable(getattr(value, "tolist", None)):  # numpy arrays and scalars
            return _to_json(value.tolist(), path, inside)
        if callable(getattr(value, "item", None)) and type(value).__module__.split(".")[0] == "numpy":
            return _to_json(value.item(), path, inside)
        raise _unsendable(value, list(path))
    return _walk(value, path, inside)


def _walk(value: Any, path: List[Any], inside: Dict[int, int]) -> JSON:
    """:func:`_to_json` of a container: a dict, list, tuple, set or dataclass."""
    if id(value) in inside:
        raise _NotJson(ValueError, list(path), "is the %s it is inside (%s contains itself), which JSON cannot write; "
                       "pass a copy without the loop" % (type(value).__name__, _described(path[:inside[id(value)]])
                                                         if inside[id(value)] else "it"))
    marker = id(value)
    inside[marker] = len(path)  # its path is path[:this] while it is walked
    kind = type(value)
    if kind is not dict and kind is not list and dataclasses.is_dataclass(value):
        value = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
        kind = dict
    if kind is dict or isinstance(value, Mapping):
        converted: Dict[str, Any] = {}
        for key, item in value.items():
            name = key if type(key) is str else _json_key(key, path)
            if _plain(item):
                converted[name] = item
            else:
                path.append(key)
                converted[name] = _to_json(item, path, inside)
                path.pop()
        if len(converted) != len(value):  # keys that JSON writes alike (1 and "1"): one would be lost
            seen: Dict[str, Any] = {}
            for key in value:
                name = _json_key(key, path)
                if name in seen:
                    raise _NotJson(ValueError, list(path), "has the keys %r and %r, which are the same JSON key %r: "
                                   "one would be lost" % (seen[name], key, name))
                seen[name] = key
        result: JSON = converted
    elif kind is list or isinstance(value, (list, tuple)):
        result = []
        for index, item in enumerate(value):
            if _plain(item):
                result.append(item)
            else:
                path.append(index)
                result.append(_to_json(item, path, inside))
                path.pop()
    else:
        path.append("<a set item>")
        items = [_to_json(item, path, inside) for item in value]
        path.pop()
        try:
            result = sorted(items)
        except TypeError:
            result = items
    del inside[marker]
    return result


#: Python's names for the parameters a message names by their wire names.
_PYTHON_NAMES = {
    "toolChoice": "tool_choice", "maxToolRounds": "max_tool_rounds", "maxToolCalls": "max_tool_calls",
    "enabledTools": "enabled_tools", "fallbackOptionID": "fallback_option_id",
    "toolTimeoutSeconds": "tool_timeout_seconds", "maxConcurrency": "max_concurrency",
    "keepRecentTurns": "keep_recent_turns", "summaryInstructions": "summary_instructions"}


def _described(path: List[Any]) -> str:
    """A path as Python would subscript it: ``context['player']['hp']``; the root alone: ``the context``."""
    if not path:
        return "the value"
    root = _PYTHON_NAMES.get(path[0], path[0]) if isinstance(path[0], str) else "[%r]" % (path[0],)
    if len(path) == 1:
        return "the %s" % root
    return root + "".join("[%r]" % (key,) if key != "<a set item>" else "[<a set item>]" for key in path[1:])


def _jsonable(value: Any, where: Optional[str] = None, root: Optional[str] = None) -> JSON:
    """Converts common Python values (sets, tuples, Decimal, dataclasses, numpy; a Session, Npc, World or
    Subscription as its id; int dict keys as their digits) to JSON data. What JSON cannot carry as it is raises
    before anything is sent, naming ``where`` (the call) and the path from ``root`` (a param's name): an int beyond
    2**53 (the bridge would round it), NaN or infinity, a value that contains itself, keys that would collide
    (ValueError); a value JSON has no type for (a datetime, bytes, an Enum, a Python type in a schema, a coroutine
    never awaited), a key that is not a str, int or float (TypeError)."""
    try:
        return _to_json(value, [root] if root is not None else [], {})
    except _NotJson as problem:
        subject = _described(problem.path)
        raise problem.kind("%s%s %s" % (where + ": " if where else "", subject, problem.predicate)) from None
    except RecursionError:
        raise ValueError("%s%s is nested deeper than this client walks (%d levels); flatten it"
                         % (where + ": " if where else "", _described([root] if root else []),
                            sys.getrecursionlimit())) from None


def _dumps(value: Any, where: Optional[str] = None) -> str:
    """Compact JSON of a message; what JSON cannot carry raises ValueError/TypeError naming ``where`` and the
    path (the params' or result's members by name)."""
    if isinstance(value, Mapping) and ("params" in value or "result" in value):
        message = dict(value)
        member = "params" if "params" in message else "result"
        inner = message[member]
        if isinstance(inner, Mapping):
            message[member] = {str(key): _jsonable(item, where, key) for key, item in inner.items()}
        else:
            message[member] = _jsonable(inner, where, member)
        return json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return json.dumps(_jsonable(value, where), separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _lone_surrogate(value: Any, path: str) -> Optional[str]:
    """Where the first string that UTF-8 cannot encode (a lone surrogate) is in ``value``, described."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as error:
            return "%s has a lone surrogate %r at index %d" % (path, value[error.start], error.start)
        return None
    if isinstance(value, Mapping):
        for key, item in value.items():
            found = _lone_surrogate(str(key), path + " (a key)") or _lone_surrogate(item, "%s.%s" % (path, key))
            if found:
                return found
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            found = _lone_surrogate(item, "%s[%d]" % (path, index))
            if found:
                return found
    return None


#: What a script called, for the errors of a request's params: the method's Python call.
_CALLS = {
    "content/generate": "bridge.generate()", "decision/decide": "bridge.decide()",
    "decision/decideMany": "bridge.decide_many()", "world/create": "bridge.create_world()",
    "npc/create": "bridge.create_npc()", "npc/restore": "bridge.restore_npc()", "npc/talk": "npc.talk()",
    "npc/bark": "npc.bark()", "npc/update": "npc.update()", "session/create": "bridge.create_session()",
    "session/respond": "session.respond()", "session/setTools": "session.set_tools()",
    "session/compact": "session.compact()"}


def _where_of(method: str, params: Any) -> str:
    """The call a request's params belong to, as a script wrote it: ``world.set('quest.reward')``,
    ``bridge.generate()``; ``bridge.request('x/y')`` for another method."""
    path = params.get("path") if isinstance(params, Mapping) else None
    if method in ("world/set", "world/get", "world/remove") and isinstance(path, str):
        return "world.%s(%r)" % (method[len("world/"):], path)
    if method == "world/merge":
        return "world.merge(path=%r)" % path if isinstance(path, str) and path else "world.merge()"
    return _CALLS.get(method, "bridge.request(%r)" % method)


def _encode(message: Dict[str, Any], where: Optional[str] = None) -> bytes:
    """One protocol line as UTF-8. Values that are not JSON raise TypeError/ValueError; text that UTF-8 cannot
    encode (a lone surrogate, e.g. from bytes decoded with ``errors="surrogateescape"``) raises a ValueError
    that names where it is."""
    text = _dumps(message, where)
    try:
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        data = _jsonable(message)
        found = _lone_surrogate(data.get("params", data.get("result")), "params" if "params" in data else "result")
        raise ValueError("%s, which UTF-8 cannot encode; nothing was sent (decode bytes with errors='replace' "
                         "instead of 'surrogateescape')" % (found or "the message has a lone surrogate")) from None


def _printable(text: str) -> str:
    """``text`` with lone surrogates escaped, so that it can always be sent."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _max_line_bytes_of(command: Sequence[str]) -> Optional[int]:
    """The ``--max-line-bytes`` value in a bridge's argv, or None."""
    for index, arg in enumerate(command):
        value = None
        if arg == "--max-line-bytes" and index + 1 < len(command):
            value = command[index + 1]
        elif arg.startswith("--max-line-bytes="):
            value = arg[len("--max-line-bytes="):]
        if value is not None and value.isdigit():
            return int(value)
    return None


def _caller_of(params: Mapping[str, Any]) -> str:
    """Who a ``tool/call`` came from, for the log: ``session 'guard'``, ``NPC 'gorm'``, or the decision or
    generation."""
    if isinstance(params.get("session"), str):
        return "session %r" % params["session"]
    if isinstance(params.get("npc"), str):
        return "NPC %r" % params["npc"]
    return "a decision or generation"


def _check_callable(value: Any, name: str) -> None:
    """A TypeError naming ``name`` when ``value`` is neither None nor callable."""
    if value is not None and not callable(value):
        raise TypeError("%s must be a function (or None); got %s %r" % (name, type(value).__name__, value))


def _world_id(world: Any) -> Optional[str]:
    """The id to send for a ``world`` argument (a :class:`World`, an id, None or :data:`NULL`)."""
    if world is None or world is NULL or isinstance(world, str):
        return world
    if isinstance(world, World):
        return world.id
    if inspect.isawaitable(world):
        raise TypeError("world %s" % _awaitable_advice(world))
    raise TypeError("world must be a World or a world id; got %s %r (create it first: "
                    "world = await bridge.create_world(state))" % (type(world).__name__, world))


#: What each handle kind is called in an id error, and an example id.
_KINDS = {"Npc": ("an NPC", "gorm"), "World": ("a world", "village"), "Session": ("a session", "guard")}


def _handle_id(value: Any, kind: type, where: str) -> str:
    """The id for ``bridge.npc(id)`` / ``world(id)`` / ``session(id)``: an id, or a handle of that kind (its id).
    Anything else is a TypeError at once that says what to pass: a persona or a world's state is created first."""
    if isinstance(value, str):
        return value
    if isinstance(value, kind):
        return value.id
    noun, example = _KINDS[kind.__name__]
    takes = "%s takes %s's id (a string such as %r); got" % (where, noun, example)
    if inspect.isawaitable(value):
        raise TypeError("%s %s" % (takes, _awaitable_advice(value)[len("is "):]))
    if kind is Npc and isinstance(value, Mapping) and isinstance(value.get("name"), str):
        raise TypeError("%s a persona (%s): create the NPC with await bridge.create_npc(persona) and use the Npc it "
                        "returns" % (takes, _shown(value)))
    if kind is World and isinstance(value, Mapping):
        raise TypeError("%s a dict (%s): create the world with await bridge.create_world(state) and use the World "
                        "it returns" % (takes, _shown(value)))
    raise TypeError("%s %s" % (takes, _shown(value)))


def _check_actor(actor: Any, where: str) -> None:
    """A TypeError unless ``actor`` is None, a persona dict, an :class:`Npc` or an NPC's id."""
    if actor is None or isinstance(actor, (str, Mapping, Npc)):
        return
    if inspect.isawaitable(actor):
        raise TypeError("%s %s" % (where, _awaitable_advice(actor)))
    raise TypeError("%s takes a persona dict, an Npc or an NPC's id; got %s" % (where, _shown(actor)))


#: What one ``decision/decideMany`` call shares between its decisions (spec §6): not read inside a request.
_SHARED_DECISION_SETTINGS = {
    "model": "model", "instructions": "instructions", "temperature": "temperature",
    "maxToolRounds": "max_tool_rounds", "max_tool_rounds": "max_tool_rounds",
    "toolTimeoutSeconds": "tool_timeout_seconds", "tool_timeout_seconds": "tool_timeout_seconds",
    "maxConcurrency": "max_concurrency", "max_concurrency": "max_concurrency", "timeout": "timeout"}

#: A request's keys as :meth:`Bridge.decide` spells them: a request dict takes the wire's names.
_REQUEST_WIRE_NAMES = {"fallback_option_id": "fallbackOptionID", "tool_choice": "toolChoice"}


def _options_meant(options: Any) -> List[Any]:
    """The option list a single option or a dict of ids to descriptions stands for, for the TypeError's advice."""
    if isinstance(options, Mapping) and "id" not in options:
        return [{"id": key, "description": value} if isinstance(value, str) else {"id": key}
                for key, value in options.items()]
    return [options]


def _decision_requests(requests: Any) -> List[Dict[str, Any]]:
    """``decide_many``'s requests as dicts; a TypeError naming the request that is not one, holds a setting the
    call shares (``model``), spells a key as :meth:`Bridge.decide`'s keyword, or has an actor that is not one."""
    if isinstance(requests, (str, bytes, Mapping)) or not isinstance(requests, Iterable):
        raise TypeError("bridge.decide_many() takes a list of requests (dicts with 'situation' and 'options'); got "
                        "%s %s (bridge.decide_many([request]))" % (_article(type(requests).__name__),
                                                                   type(requests).__name__))
    checked = []
    for index, request in enumerate(requests):
        where = "bridge.decide_many(): requests[%d]" % index
        if not isinstance(request, Mapping):
            raise TypeError("%s is %s %s (%s); a request is a dict: {'situation': ..., 'options': [...]}"
                            % (where, _article(type(request).__name__), type(request).__name__, _shown(request)))
        for key in request:
            if key in _SHARED_DECISION_SETTINGS:
                raise TypeError(
                    "%s[%r] is not read per decision: one decide_many call shares its settings among its decisions, "
                    "so pass it beside the requests: bridge.decide_many(requests, %s=...).%s For a different one per "
                    "decision, call bridge.decide for each." % (
                        where, key, _SHARED_DECISION_SETTINGS[key],
                        " A scripted model there plays one step per decision, in request order." if key == "model"
                        else ""))
            if key in _REQUEST_WIRE_NAMES:
                raise TypeError("%s[%r] is spelled %r in a request (the protocol's name; the keyword of "
                                "bridge.decide is %s=)" % (where, key, _REQUEST_WIRE_NAMES[key], key))
        _check_actor(request.get("actor"), "%s['actor']" % where)
        checked.append(dict(request))
    return checked


def _log_warnings(where: str, result: Any) -> None:
    """Logs the ``warnings`` of a result whose call returns only part of it (``generate``, ``decide_many``)."""
    warnings = result.get("warnings") if isinstance(result, Mapping) else None
    for warning in warnings if isinstance(warnings, list) else []:
        logger.warning("%s: %s", where, warning)


def _params(**values: Any) -> Dict[str, Any]:
    """Params without the ``None`` values (:data:`NULL` stays, and is sent as ``null``)."""
    return {k: v for k, v in values.items() if v is not None}


def _id_key(value: Any) -> str:
    """A hashable identity for a request id as the bridge echoes it."""
    if isinstance(value, bool):
        return "x" + repr(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return ("s" if isinstance(value, str) else "n") + str(value)


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


def _close_unstarted(value: Any) -> None:
    """Drops an awaitable a callback returned that will not be awaited, without a "never awaited" warning."""
    if inspect.iscoroutine(value) or isinstance(value, _gather_awaitables):
        value.close()
    elif isinstance(value, asyncio.Future):
        value.cancel()


def _accepts_two(handler: Callback) -> bool:
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):
        return False
    positional = [
        p for p in signature.parameters.values()
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    has_var = any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in signature.parameters.values())
    return has_var or len(positional) >= 2


class Bridge:
    """A running bridge process. Use as ``async with Bridge() as bridge:`` (or ``await start()`` / ``await close()``).

    What the bridge writes to stderr (its log) is passed on to ``sys.stderr``, line by line. When the bridge exits
    by itself (a bad flag, a crash, a kill), every waiting and later call fails with a -32023 ``shut_down``
    :class:`BridgeError` that says how it ended and ends with its last stderr lines, up to ``EXIT_LOG_LINES``
    (3): "The bridge process exited (exit status 2) before answering. Its last lines on stderr:\\nError: Unknown
    option '--bogus'. ...".

    :param command: argv list or whitespace-separated command line; default from the environment.
    :param env: environment for the child (default: inherited); ``OAM_EXIT_WITH_PARENT=1`` is added unless set.
    :param cwd: working directory for the child.
    :param initialize: send ``initialize`` on start (its result is in ``server_info``).
    :param client_name: the ``client.name`` sent in ``initialize``.
    :param shutdown_timeout: seconds ``close()`` waits for the process to exit after sending ``shutdown`` and
        closing its stdin, before terminating it (SIGTERM; on Windows this already kills it). A bridge that writes
        nothing within ``SHUTDOWN_ANSWER_TIMEOUT`` (0.5 s) of the ``shutdown`` (a ``ping`` follows it, which a live
        bridge fails at once) is terminated then instead.
    :param terminate_timeout: seconds ``close()`` then waits for a terminated process to exit before killing it
        (SIGKILL). A bridge that answers nothing any more (stuck, or stopped) is gone after 0.5 s and this, 1.5 s
        by default.
    :param write_timeout: seconds a message may wait to be written to the bridge (default 10; None: for ever).
        A bridge that stopped reading its input (a stopped or hung process) fills the pipe, and a write cannot
        finish: past this time the bridge is given up, that call, every call waiting for an answer and every
        later call fail with a -32023 ``shut_down`` :class:`BridgeError` "The bridge stopped reading its input",
        at once rather than queued behind the write. ``close()`` then ends the process.
    :param max_line_bytes: the longest line the bridge reads (default: the ``--max-line-bytes`` in the command,
        else the bridge's default, 16 MiB). A longer message is refused before it is sent, with a -32600
        ``invalid_message`` :class:`BridgeError`; a longer tool result becomes an error output the model sees.
    """

    #: Seconds ``close()`` waits for the bridge's first line after ``shutdown`` before terminating it.
    SHUTDOWN_ANSWER_TIMEOUT = 0.5

    def __init__(
        self,
        command: Union[str, Sequence[str], None] = None,
        *,
        env: Optional[Mapping[str, str]] = None,
        cwd: Optional[str] = None,
        initialize: bool = True,
        client_name: str = "python",
        shutdown_timeout: float = 2.0,
        terminate_timeout: float = 1.0,
        max_line_bytes: Optional[int] = None,
        write_timeout: Optional[float] = 10.0,
    ):
        self.command = bridge_command(command)
        self.max_line_bytes = max_line_bytes or _max_line_bytes_of(self.command) or MAX_LINE_BYTES
        self._env = dict(env) if env is not None else None
        self._cwd = cwd
        self._initialize = initialize
        self._client_name = client_name
        self._shutdown_timeout = shutdown_timeout
        self._terminate_timeout = terminate_timeout
        self._write_timeout = write_timeout
        self._process: Optional[asyncio.subprocess.Process] = None
        self._reader: Optional["asyncio.Task[None]"] = None
        self._log_reader: Optional["asyncio.Task[None]"] = None
        # The bridge's last stderr lines that are not blank, for the error of a bridge that exits by itself.
        self._log_tail: "collections.deque[str]" = collections.deque(maxlen=EXIT_LOG_LINES)
        self._ids = itertools.count(1)
        self._pending: Dict[str, _Pending] = {}
        self._tools: Dict[str, _Tool] = {}
        self._tool_tasks: Dict[str, "asyncio.Task[None]"] = {}
        self._tool_runs: Dict[str, _ToolRun] = {}
        self._callback_tasks: "set[asyncio.Future[None]]" = set()  # held so that they are not collected
        self._listeners: Dict[str, List[Callback]] = {}
        self._subscriptions: Dict[str, Callback] = {}
        self._write_lock: Optional[asyncio.Lock] = None
        self._dead: Optional[BridgeError] = None
        self._gave_up = False  # the bridge stopped reading its input (see write_timeout)
        self._closing = False
        # Cancels this client sent for a turn it gave up (task cancelled, timeout): (target, id) → (number, why).
        self._cancels = 0
        self._given_up: Dict[Any, Any] = {}
        self._heard_while_closing: Optional[asyncio.Event] = None  # a line (or the end of output) after close()
        self.server_info: Dict[str, Any] = {}

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> "Bridge":
        """Starts the process (and sends ``initialize`` unless disabled)."""
        if self._closing:
            raise BridgeError(SHUT_DOWN, "shut_down", "The bridge was closed; create a new Bridge to start another.")
        if self._process is not None:
            return self
        self._write_lock = asyncio.Lock()
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=bridge_environment(self._env),
                cwd=self._cwd,
                limit=LINE_LIMIT,
            )
        except OSError as error:
            hint = ""
            if isinstance(error, FileNotFoundError):
                hint = (" (pass Bridge(command=[...]), or set OAM_BRIDGE_COMMAND to the whole command line or "
                        "OAM_BRIDGE_PATH to a compiled oam)")
            raise BridgeError(SHUT_DOWN, "shut_down",
                              "Cannot start the bridge %r: %s%s" % (self.command, error, hint)) from error
        self._log_reader = asyncio.ensure_future(self._read_log())
        self._reader = asyncio.ensure_future(self._read_loop())
        if self._initialize:
            self.server_info = await self.request(
                "initialize", {"client": {"name": self._client_name, "version": VERSION},
                               "protocolVersion": PROTOCOL_VERSION})
        return self

    async def close(self) -> None:
        """Shuts the bridge down (cancelling its work) and waits for the process to exit, boundedly.

        Sends ``shutdown`` (and a ``ping``) and closes the bridge's stdin (the bridge answers what it has read,
        then exits); a process still running after ``shutdown_timeout`` seconds, or one that has written nothing
        0.5 s after the ``shutdown``, is terminated, and killed after ``terminate_timeout`` more. Waiting and later
        requests fail with -32023 "The bridge was closed."."""
        if self._process is None or self._closing:
            return
        self._closing = True
        heard = self._heard_while_closing = asyncio.Event()
        process = self._process
        if process.stdout is None or process.stdout.at_eof():
            heard.set()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._shutdown_timeout
        answer_deadline = loop.time() + min(self.SHUTDOWN_ANSWER_TIMEOUT, self._shutdown_timeout)
        alive = self._dead is None and process.returncode is None
        if self._gave_up:  # it reads nothing, not even the end of its input: terminated at once
            deadline = loop.time()
        if alive:
            try:  # the answer is not awaited: the exit is (a bridge that answers nothing must not hold close up)
                await asyncio.wait_for(self._send_shutdown(), max(answer_deadline - loop.time(), 0))
            except (BridgeError, asyncio.TimeoutError, ConnectionError, OSError):
                pass
        try:
            if process.stdin is not None:
                process.stdin.close()
        except (ConnectionError, OSError):
            pass
        if alive:  # a bridge that writes nothing (frozen, stopped, not reading) gets no more than the answer wait
            try:
                await asyncio.wait_for(heard.wait(), max(answer_deadline - loop.time(), 0))
            except asyncio.TimeoutError:
                deadline = loop.time()
        if not await self._wait_exit(process, deadline - loop.time()):
            try:
                process.terminate()
            except ProcessLookupError:
                pass
            if not await self._wait_exit(process, self._terminate_timeout):
                try:
                    process.kill()
                except ProcessLookupError:
                    pass
                await process.wait()
        if self._reader is not None:
            try:  # the output ends with the process (unless a child of it still holds the pipe)
                await asyncio.wait_for(asyncio.shield(self._reader), max(self._terminate_timeout, 0.1))
            except asyncio.TimeoutError:
                self._reader.cancel()
        if self._log_reader is not None:  # its stderr too, boundedly; a child of it may hold the pipe open
            await asyncio.wait({self._log_reader}, timeout=max(self._terminate_timeout, 0.1))
            self._log_reader.cancel()
        for task in list(self._tool_tasks.values()):
            task.cancel()
        self._fail_all(BridgeError(SHUT_DOWN, "shut_down", "The bridge was closed."))

    async def _send_shutdown(self) -> None:
        """Writes a ``shutdown`` request; its response (or the exit) settles it later, unawaited. A ``ping``
        follows it: after ``shutdown`` a live bridge fails every request at once (PROTOCOL.md), so its answer shows
        the bridge is alive even while the shutdown waits for cancelled work."""
        request_id = "py-%d" % next(self._ids)
        key = _id_key(request_id)
        future: "asyncio.Future[Any]" = asyncio.get_running_loop().create_future()
        _discard(future)
        future.add_done_callback(lambda _: self._pending.pop(key, None))
        self._pending[key] = _Pending(future, None, None)
        await self._write(self._encode({"jsonrpc": "2.0", "id": request_id, "method": "shutdown"}))
        await self._write(self._encode({"jsonrpc": "2.0", "id": "py-%d" % next(self._ids), "method": "ping"}))

    @staticmethod
    async def _wait_exit(process: "asyncio.subprocess.Process", timeout: float) -> bool:
        """Whether ``process`` exits within ``timeout`` seconds."""
        try:
            await asyncio.wait_for(process.wait(), max(timeout, 0))
            return True
        except asyncio.TimeoutError:
            return process.returncode is not None

    async def __aenter__(self) -> "Bridge":
        try:
            return await self.start()
        except BaseException:
            await self.close()
            raise

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.close()

    @property
    def pid(self) -> Optional[int]:
        """Process id of the bridge, once started."""
        return self._process.pid if self._process else None

    @property
    def returncode(self) -> Optional[int]:
        """Exit status once the bridge process has exited, else None."""
        return self._process.returncode if self._process else None

    # ------------------------------------------------------------------ protocol

    async def request(
        self,
        method: str,
        params: Optional[Mapping[str, Any]] = None,
        *,
        on_event: Optional[Callback] = None,
        timeout: Optional[float] = None,
        _on_result: Optional[Callback] = None,
        _events: Optional[_Events] = None,
        _why: Optional[str] = None,
    ) -> Any:
        """Sends a request and returns its ``result``; raises :class:`BridgeError` for an error response.

        ``on_event(event)`` receives the ``event`` of every ``<namespace>/event`` notification the request
        causes (``session/event``, ``npc/event``). With ``timeout`` (seconds) the call raises a -32024
        ``timeout`` error when it does not finish in time and drops the late response; a timed-out
        ``session/respond`` or ``npc/talk`` is cancelled on the bridge too (``session/cancel`` / ``npc/cancel``).
        An ``npc/cancel``, ``npc/delete``, ``session/cancel`` or ``session/delete`` sent here does what
        :meth:`Npc.cancel` and :meth:`Npc.delete` do: from the call on, the running turn of the NPC or session it
        names gets no more events, and after a delete its -32009 ``cancelled`` error says why.
        """
        _check_callable(on_event, "on_event")
        if self._dead is not None:
            raise self._dead
        if self._process is None:
            raise BridgeError(SHUT_DOWN, "shut_down", "The bridge is not started.")
        request_id = "py-%d" % next(self._ids)
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        line = self._encode(message, _where_of(method, params))  # invalid params fail here, before anything is sent
        if method in _ENDING_METHODS:  # npc.delete() and the like (their _why), or sent by hand
            self._end_work(method, params, _why or _ENDING_METHODS[method])
        cancels_before = self._cancels
        key = _id_key(request_id)
        future: "asyncio.Future[Any]" = asyncio.get_running_loop().create_future()
        pending = _Pending(future, on_event, _on_result, _events, _turn_work_of(method, params))
        self._pending[key] = pending
        waits_for = self._note_queued(method, params)
        try:
            if timeout is None:
                await self._write(line)
                result = await asyncio.shield(future)
            else:
                try:  # the timeout counts the write too (a bridge that stopped reading holds it up)
                    result = await asyncio.wait_for(self._write_and_wait(line, future), timeout)
                except asyncio.TimeoutError:
                    target = _CANCELS.get(method)
                    if target is not None and isinstance(params, Mapping) and isinstance(params.get(target[1]), str):
                        self._note_given_up(method, target[1], params[target[1]])
                        await _send_cancel(self, target[0], {target[1]: params[target[1]]})
                    raise BridgeError(
                        TIMEOUT, "timeout",
                        "'%s' did not finish within %d ms; it was cancelled." % (method, round(timeout * 1000))) from None
        except BridgeError as error:
            if error.data_code != "cancelled":
                raise
            raise self._why_cancelled(error, method, params, cancels_before) from None
        finally:
            self._pending.pop(key, None)
            for run in waits_for:
                run.queued.remove(method)
        if pending.callback_tasks:  # coroutine callbacks of this call finish before it returns
            await asyncio.gather(*pending.callback_tasks, return_exceptions=True)
        if pending.callback_error is not None:
            raise pending.callback_error
        return result

    def _end_work(self, method: str, params: Any, why: Optional[str]) -> None:
        """Before an ``npc/cancel``, ``npc/delete``, ``session/cancel`` or ``session/delete`` is sent (by
        :meth:`Npc.cancel`, :meth:`Npc.delete`, :meth:`Npc.restore`, the session's, or by hand with
        :meth:`request`): the turns in flight of the NPC or session it names get no more events, and with ``why``
        the -32009 of its requests already sent ends with "when " + ``why``."""
        kind = method.split("/", 1)[0]
        target_id = params.get(kind) if isinstance(params, Mapping) else None
        if not isinstance(target_id, str):
            return
        self._silence("%s %s" % (kind, target_id))
        if why is not None:
            self._note_cancel(kind, target_id, why)

    def _silence(self, work: str) -> None:
        """From now on, the event callbacks of the requests in flight of ``work`` (``npc gorm``, ``session guard``)
        get nothing more, also the events already read: its cancel is about to be sent (the player walked away)."""
        for pending in self._pending.values():
            if pending.work == work:
                pending.events.stopped = True

    def _note_queued(self, method: str, params: Any) -> List[_ToolRun]:
        """The running tool calls of the turn this request waits for (it is of the same NPC or session)."""
        if method not in _QUEUED_METHODS or (method == "npc/state" and isinstance(params, Mapping)
                                            and params.get("settle") is False):
            return []
        work = _work_of(params)
        runs = [run for run in self._tool_runs.values() if work is not None and run.work == work]
        for run in runs:
            run.queued.append(method)
        return runs

    def _note_given_up(self, method: str, target: str, target_id: str) -> None:
        """Remembers that a turn of ``target_id`` was given up here, to explain the requests it cancelled."""
        self._note_cancel(target, target_id, (
            "the task awaiting its '%s' was cancelled or its timeout passed: the protocol cancels the running turn "
            "and every request queued behind it together (there is no cancel for one request). Send it again if you "
            "still need it." % method))

    def _note_cancel(self, target: str, target_id: str, when: str) -> None:
        """Remembers, before it is sent, a request of this client that cancels all the work of ``target_id``
        (``npc``/``session``): the -32009 of its requests already sent then ends with "when " + ``when``."""
        self._cancels += 1
        self._given_up[(target, target_id)] = (self._cancels, when)

    def _why_cancelled(self, error: BridgeError, method: str, params: Any, cancels_before: int) -> BridgeError:
        """A -32009 error, saying why when this client caused it: a turn of the same NPC or session given up after
        the request was sent (the protocol cancels its queued work with it), or ``close()``."""
        why = None
        for target in ("npc", "session"):
            target_id = params.get(target) if isinstance(params, Mapping) and method.startswith(target + "/") else None
            noted = self._given_up.get((target, target_id)) if isinstance(target_id, str) else None
            if noted is not None and noted[0] > cancels_before:
                why = "'%s' was cancelled with the rest of the work of %s '%s' when %s" % (
                    method, "NPC" if target == "npc" else "session", target_id, noted[1])
        if why is None and self._closing:
            why = ("It was cancelled because this program closed the bridge (close(), or the end of the "
                   "'async with' block that opened it).")
        if why is None:
            return error
        explained = BridgeError(error.code, error.data_code, "%s %s" % (error.message, why), error.data)
        explained.__cause__ = error
        return explained

    async def _write_and_wait(self, line: bytes, future: "asyncio.Future[Any]") -> Any:
        """Writes a request's line, then waits for its answer (the future survives a cancelled wait)."""
        await self._write(line)
        return await asyncio.shield(future)

    async def notify(self, method: str, params: Optional[Mapping[str, Any]] = None) -> None:
        """Sends a notification (no response). An ``npc/cancel``, ``npc/delete``, ``session/cancel`` or
        ``session/delete`` sent here ends the work it names as :meth:`request` does: from the call on, the running
        turn of that NPC or session gets no more events, and after a delete its -32009 ``cancelled`` error says why
        (``... when an 'npc/delete' notification deleted the NPC.``)."""
        if self._dead is not None:
            raise self._dead
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        line = self._encode(message, _where_of(method, params))  # invalid params fail here, before anything is sent
        if method in _ENDING_NOTIFICATIONS:
            self._end_work(method, params, _ENDING_NOTIFICATIONS[method])
        await self._write(line)

    def on_notification(self, method: str, handler: Callback) -> Callable[[], None]:
        """Calls ``handler(params)`` for every notification ``method`` (``"*"``: every notification, as
        ``handler(method, params)``). Returns a function that removes the handler."""
        _check_callable(handler, "handler")
        self._listeners.setdefault(method, []).append(handler)

        def remove() -> None:
            handlers = self._listeners.get(method, [])
            if handler in handlers:
                handlers.remove(handler)

        return remove

    def _encode(self, message: Dict[str, Any], where: Optional[str] = None) -> bytes:
        """The message as a line; raises TypeError/ValueError (not JSON, lone surrogate) or a -32600
        ``invalid_message`` BridgeError (longer than the bridge reads) without sending anything."""
        line = _encode(message, where)
        if len(line) - 1 > self.max_line_bytes:
            advice = ""
            if message.get("method") in ("world/create", "world/set", "world/merge"):
                advice = (" A world's state this large loads in parts: world/create with part of it, then world/merge "
                          "the rest, a few keys at a time (docs/PROTOCOL.md §6, 'Saving a world').")
            raise BridgeError(
                -32600, "invalid_message",
                "The message is %d bytes, longer than the %d bytes the bridge reads; it was not sent (a bridge "
                "started with a higher --max-line-bytes needs Bridge(max_line_bytes=...) too).%s"
                % (len(line) - 1, self.max_line_bytes, advice),
                {"code": "invalid_message", "bytes": len(line) - 1, "limit": self.max_line_bytes})
        return line

    async def _write(self, line: bytes) -> None:
        process = self._process
        assert process is not None and process.stdin is not None and self._write_lock is not None
        async with self._write_lock:
            if self._dead is not None:  # given up while this write waited for its turn: nothing is queued
                raise self._dead
            try:
                process.stdin.write(line)
                if self._write_timeout is None:
                    await process.stdin.drain()
                else:
                    await asyncio.wait_for(process.stdin.drain(), self._write_timeout)
            except asyncio.TimeoutError:
                raise self._stopped_reading() from None
            except (ConnectionError, OSError) as error:
                # The reader reports the exit; until then, fail this write clearly.
                raise self._dead or BridgeError(SHUT_DOWN, "shut_down", "The bridge process is gone: %s" % error)

    def _stopped_reading(self) -> BridgeError:
        """Gives up a bridge whose input is full for ``write_timeout``: every waiting and later call fails."""
        process = self._process
        error = BridgeError(
            SHUT_DOWN, "shut_down",
            "The bridge stopped reading its input: a message waited %g s to be written (the process %s is "
            "stopped or hung). Close this Bridge and start another." % (
                self._write_timeout, process.pid if process is not None else "?"))
        self._dead = error
        self._gave_up = True
        self._fail_all(error)
        for task in list(self._tool_tasks.values()):
            task.cancel()
        return error

    async def _read_loop(self) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        try:
            while True:
                try:
                    line = await process.stdout.readline()
                except ValueError:  # a line longer than LINE_LIMIT
                    logger.error("open_apple_models: dropped an over-long line from the bridge")
                    continue
                if not line:
                    break
                if self._heard_while_closing is not None:
                    self._heard_while_closing.set()
                if self._dispatch(line):
                    # A task a callback started (a death scene that calls npc.delete(), a cancel) takes its first
                    # step before the next line is handled: what it silences is silenced from the next event on,
                    # also when the bridge wrote many at once.
                    await asyncio.sleep(0)
        except asyncio.CancelledError:
            raise
        except Exception:  # pragma: no cover - defensive
            logger.exception("open_apple_models: reader failed")
        if self._heard_while_closing is not None:
            self._heard_while_closing.set()
        try:
            status = await asyncio.wait_for(process.wait(), 2.0)
            description = ("exit status %d" % status) if status >= 0 else ("signal %d" % -status)
        except asyncio.TimeoutError:
            description = "output closed"
        if not self._closing and self._log_reader is not None:
            # Its stderr ends with it (unless a process it started holds it open): its last lines are in first.
            await asyncio.wait({self._log_reader}, timeout=1.0)
        if self._closing:
            error = BridgeError(SHUT_DOWN, "shut_down", "The bridge was closed.")
        else:
            message = "The bridge process exited (%s) before answering." % description
            if self._log_tail:
                # What it said last ("Error: Unknown option '--bogus'. ...") tells the developer why, also in an
                # engine host that shows no stderr.
                message += " Its last lines on stderr:\n" + "\n".join(self._log_tail)
            error = BridgeError(SHUT_DOWN, "shut_down", message)
        self._dead = self._dead or error  # a bridge given up earlier (it stopped reading) keeps that error
        self._fail_all(error)
        for task in list(self._tool_tasks.values()):
            task.cancel()

    async def _read_log(self) -> None:
        """Passes each line the bridge writes to stderr (its log) on to this process's ``sys.stderr`` as it comes,
        keeping the last ones that are not blank for the error of a bridge that exits by itself."""
        process = self._process
        assert process is not None and process.stderr is not None
        rest = b""
        try:
            while True:
                chunk = await process.stderr.read(65536)
                if not chunk:
                    break
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                if len(rest) > 65536:  # a very long line without a break: passed on in pieces
                    lines.append(rest)
                    rest = b""
                for line in lines:
                    self._pass_log_line(line)
        except asyncio.CancelledError:
            raise
        except Exception:  # pragma: no cover - defensive
            logger.exception("open_apple_models: stderr reader failed")
        if rest:
            self._pass_log_line(rest)

    def _pass_log_line(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        if text.strip():
            self._log_tail.append(text)
        stream = sys.stderr
        if stream is None:  # pythonw, or a host that gives no stderr
            return
        try:
            stream.write(text + "\n")
            stream.flush()
        except (OSError, ValueError):  # closed, or a broken pipe: the line is still kept above
            pass

    def _fail_all(self, error: BridgeError) -> None:
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_exception(error)
                pending.future.exception()  # mark retrieved: a cancelled caller may never await it

    def _dispatch(self, raw: bytes) -> bool:
        """Handles one line from the bridge; True when it was a notification (its callbacks may have started
        tasks)."""
        try:
            message = json.loads(raw)
        except ValueError:
            logger.warning("open_apple_models: ignoring a non-JSON line from the bridge: %r", raw[:200])
            return False
        if not isinstance(message, dict):
            return False
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            if "id" in message:
                self._handle_bridge_request(message["id"], method, params)
                return False
            self._handle_notification(method, params)
            return True
        if "id" not in message or ("result" not in message and "error" not in message):
            return False
        key = _id_key(message["id"])
        pending = self._pending.get(key)
        if pending is None or pending.future.done():
            return False  # a late response (timed out or cancelled caller): dropped
        if "error" in message:
            pending.future.set_exception(BridgeError.from_error(message["error"]))
        else:
            if pending.on_result is not None:
                try:
                    pending.on_result(message["result"])  # runs before any later line is handled
                except Exception as error:  # pragma: no cover - internal hooks
                    pending.callback_error = error
            pending.future.set_result(message.get("result"))
        return False

    def _run_callback(self, callback: Callback, *args: Any, pending: Optional[_Pending] = None) -> None:
        """Runs a user callback; an exception is re-raised by the request it belongs to (or logged)."""

        def report(error: BaseException) -> None:
            if pending is not None:
                pending.events.stopped = True  # a callback that raised gets no more events
                if pending.callback_error is None:
                    pending.callback_error = error  # raised by the request once its response arrives
            else:
                logger.error("open_apple_models: callback %r raised %r", callback, error)

        try:
            result = callback(*args)
        except Exception as error:
            report(error)
            return
        if inspect.isawaitable(result):
            # A request's coroutine callbacks run one at a time in the order of its events, and not once the
            # request's events stopped (a callback raised, the turn was given up).
            previous = pending.callback_tasks[-1] if pending is not None and pending.callback_tasks else None

            async def run() -> None:
                try:
                    if previous is not None:
                        await asyncio.wait([previous])
                except BaseException:
                    _close_unstarted(result)
                    raise
                if pending is not None and pending.events.given_up():
                    _close_unstarted(result)
                    return
                try:
                    await result
                except Exception as error:
                    report(error)

            task = asyncio.ensure_future(run())
            self._callback_tasks.add(task)
            task.add_done_callback(self._callback_tasks.discard)
            if pending is not None:
                pending.callback_tasks.append(task)

    def _handle_notification(self, method: str, params: Dict[str, Any]) -> None:
        if method == "tool/cancel":
            key = _id_key(params.get("id"))
            run = self._tool_runs.get(key)
            if run is not None and run.queued and "timed out" in str(params.get("reason", "")):
                logger.warning(
                    "Tool '%s' timed out while '%s' of its own %s, sent while the handler ran, waited for the turn "
                    "that made the call: a handler that waits for its own NPC's (or session's) queued work "
                    "(state(), talk, update) waits until the tool timeout. Inside a tool handler, save with "
                    "npc.state(settle=False), or do that work once the turn is over.", run.name, run.queued[0],
                    run.work)
            task = self._tool_tasks.get(key)
            if task is not None:
                task.cancel()
        elif method == "world/changed":
            callback = self._subscriptions.get(str(params.get("subscription")))
            if callback is not None:
                self._run_callback(callback, params)
        elif method.endswith("/event") and "requestId" in params:
            pending = self._pending.get(_id_key(params["requestId"]))
            if (pending is not None and pending.on_event is not None and not pending.events.given_up()
                    and isinstance(params.get("event"), dict)):
                self._run_callback(pending.on_event, params["event"], pending=pending)
        for handler in list(self._listeners.get(method, [])):
            self._run_callback(handler, params)
        for handler in list(self._listeners.get("*", [])):
            self._run_callback(handler, method, params)

    def _handle_bridge_request(self, request_id: Any, method: str, params: Dict[str, Any]) -> None:
        if method != "tool/call":
            asyncio.ensure_future(self._reply_error(request_id, -32601, "Unknown method '%s'." % method))
            return
        key = _id_key(request_id)
        call = params.get("call") if isinstance(params.get("call"), dict) else {}
        self._tool_runs[key] = _ToolRun(str(call.get("name", "")), _work_of(params))
        task = asyncio.ensure_future(self._run_tool(request_id, params))
        self._tool_tasks[key] = task

        def done(_task: "asyncio.Future[None]") -> None:
            self._tool_tasks.pop(key, None)
            self._tool_runs.pop(key, None)

        task.add_done_callback(done)

    async def _reply_error_output(self, request_id: Any, output: str) -> None:
        await self._send_line(request_id, {"result": {"output": _printable(output), "isError": True}})

    async def _reply_error(self, request_id: Any, code: int, message: str) -> None:
        await self._send_line(request_id, {"error": {"code": code, "message": _printable(message)}})

    async def _send_line(self, request_id: Any, members: Dict[str, Any]) -> None:
        if self._dead is None:
            try:
                await self._write(self._encode(dict({"jsonrpc": "2.0", "id": request_id}, **members)))
            except BridgeError:
                pass

    async def _run_tool(self, request_id: Any, params: Dict[str, Any]) -> None:
        call = params.get("call") if isinstance(params.get("call"), dict) else {}
        name = str(call.get("name", ""))
        tool = self._tools.get(name)
        if tool is None:
            # The model gets an error output; the game hears of it too (a restored save or a resumed history
            # keeps its tools' definitions, not their handlers).
            logger.warning("The model called tool %r (%s), but no handler is registered for it in this client: "
                           "it got an error output. Register it with @bridge.tool before the turn (a save restored "
                           "with restore_npc, or a session resumed from history, keeps the tool's definition, not "
                           "its handler).", name, _caller_of(params))
            await self._reply_error(request_id, -32601, "No handler for tool '%s' in this client." % name)
            return
        arguments = call.get("arguments") if isinstance(call.get("arguments"), dict) else {}
        context = ToolContext(
            name=name, call_id=str(call.get("id", "")), request_id=params.get("requestId"),
            session=params.get("session"), npc=params.get("npc"), index=params.get("index"), params=params)
        try:
            value = tool.handler(arguments, context) if tool.wants_context else tool.handler(arguments)
            value = await _maybe_await(value)
        except asyncio.CancelledError:
            return  # tool/cancel: the bridge no longer wants the output
        except ToolError as error:
            await self._reply_error_output(request_id, str(error) or "Tool error.")
            return
        except Exception as error:
            # The model sees one line; the developer needs the traceback (a ToolError is meant, not logged).
            logger.warning("Tool '%s' raised %s; the model gets it as an error output.", name,
                           type(error).__name__, exc_info=True)
            text = str(error)
            await self._reply_error_output(request_id, "%s: %s" % (type(error).__name__, text) if text
                                           else type(error).__name__)
            return
        try:
            payload = self._encode({"jsonrpc": "2.0", "id": request_id, "result": {"output": value}})
        except BridgeError as error:
            await self._reply_error_output(request_id, "The tool result is %d bytes, longer than the %d bytes the "
                                           "bridge reads." % (error.data["bytes"], error.data["limit"]))
            return
        except (TypeError, ValueError) as error:
            logger.warning("Tool '%s' returned a value JSON cannot send (%s); the model gets it as an error output.",
                           name, error)
            await self._reply_error_output(request_id, "The tool result is not valid JSON: %s" % error)
            return
        if self._dead is None:
            try:
                await self._write(payload)
            except BridgeError:
                pass

    # ------------------------------------------------------------------ tools

    def tool(
        self,
        name: Union[str, Callback, None] = None,
        *,
        description: Optional[str] = None,
        parameters: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> Any:
        """Decorator registering a client tool: ``@bridge.tool(description=..., parameters=...)``, or bare
        ``@bridge.tool``. The handler gets ``args`` (and, if it takes a second parameter, a
        :class:`ToolContext`) and returns the output (text or JSON data); it may be async. Raising marks the
        output as an error the model sees. ``timeout`` (seconds) is the tool's ``timeoutSeconds``: when it
        passes the bridge gives the model a timeout error and the handler is cancelled. Description defaults
        to the docstring, the name to the function name. The decorated function is returned unchanged; pass
        it (or its name) in ``tools=[...]``."""
        if callable(name):  # bare @bridge.tool
            handler = name
            self.add_tool(handler.__name__, handler, description=inspect.getdoc(handler))
            return handler

        def register(handler: Callback) -> Callback:
            self.add_tool(name or handler.__name__, handler, description=description or inspect.getdoc(handler),
                          parameters=parameters, timeout=timeout)
            return handler

        return register

    def add_tool(
        self,
        name: str,
        handler: Callback,
        *,
        description: Optional[str] = None,
        parameters: Optional[Dict[str, Any]] = None,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """Registers a client tool (see :meth:`tool`) and returns its definition."""
        if not callable(handler):
            raise TypeError("handler must be a function; got %s %r" % (type(handler).__name__, handler))
        if parameters is not None:  # a schema written with Python types ({"type": str}) says so here, not at first use
            _jsonable(parameters, "tool %r" % (name,), "parameters")
        definition: Dict[str, Any] = {"name": name}
        if description:
            definition["description"] = description
        definition["parameters"] = parameters if parameters is not None else {"type": "object", "properties": {}}
        if timeout is not None:
            definition["timeoutSeconds"] = timeout
        self._tools[name] = _Tool(name, handler, definition, _accepts_two(handler))
        return definition

    def tool_definitions(self, tools: Optional[Iterable[Any]] = None) -> List[Dict[str, Any]]:
        """Definitions for ``tools``: registered tool names, registered handler functions and/or raw definition
        dicts (default: all registered)."""
        if tools is None:
            return [dict(t.definition) for t in self._tools.values()]
        if isinstance(tools, (str, Mapping)) or callable(tools):
            raise TypeError("tools must be a list (tools=[%r]); got %s" % (tools, type(tools).__name__))
        definitions = []
        for tool in tools:
            if isinstance(tool, str):
                if tool not in self._tools:
                    raise ValueError("No tool named '%s' is registered (use @bridge.tool)." % tool)
                definitions.append(dict(self._tools[tool].definition))
            elif isinstance(tool, Mapping):
                definitions.append(dict(tool))
            elif callable(tool):
                registered = next((t for t in self._tools.values() if t.handler is tool), None)
                if registered is None:
                    raise TypeError("%s is not a registered tool handler: register it with @bridge.tool or "
                                    "bridge.add_tool first" % getattr(tool, "__name__", repr(tool)))
                definitions.append(dict(registered.definition))
            else:
                raise TypeError("A tool is a registered name, a registered handler or a definition dict; got %s %r"
                                % (type(tool).__name__, tool))
        return definitions

    def _tools_param(self, tools: Optional[Iterable[Any]]) -> Optional[List[Dict[str, Any]]]:
        return tools if tools is None or tools is NULL else self.tool_definitions(tools)

    # ------------------------------------------------------------------ sessions

    async def create_session(
        self,
        instructions: Optional[str] = None,
        *,
        session: Optional[str] = None,
        tools: Optional[Iterable[Union[str, Mapping[str, Any]]]] = None,
        options: Optional[Dict[str, Any]] = None,
        model: Any = None,
        history: Any = None,
    ) -> "Session":
        """``session/create``. ``tools`` are registered tool names or handlers, or definitions. With ``history``,
        the saved instructions and tools are used unless given; :data:`NULL` for ``instructions`` or ``tools``
        resumes without them."""
        result = await self.request("session/create", _params(
            session=session, instructions=instructions, tools=self._tools_param(tools), options=options,
            model=model, history=history))
        created = Session(self, result["session"])
        created.warnings = result.get("warnings", [])
        return created

    def session(self, session_id: str) -> "Session":
        """A handle for an existing session (its id; its own handle also works). Anything else is a TypeError."""
        return Session(self, _handle_id(session_id, Session, "bridge.session()"))

    async def list_sessions(self) -> List[Dict[str, Any]]:
        """``session/list``."""
        return (await self.request("session/list"))["sessions"]

    # ------------------------------------------------------------------ worlds

    async def create_world(self, state: Optional[Dict[str, Any]] = None, *, world: Optional[str] = None) -> "World":
        """``world/create``."""
        result = await self.request("world/create", _params(world=world, state=state))
        return World(self, result["world"])

    def world(self, world_id: str) -> "World":
        """A handle for an existing world (its id; its own handle also works). A world's state (a dict) is a
        TypeError that says to create it with :meth:`create_world`."""
        return World(self, _handle_id(world_id, World, "bridge.world()"))

    async def list_worlds(self) -> List[Dict[str, Any]]:
        """``world/list``."""
        return (await self.request("world/list"))["worlds"]

    # ------------------------------------------------------------------ NPCs

    async def create_npc(
        self,
        persona: Dict[str, Any],
        *,
        npc: Optional[str] = None,
        tools: Optional[Iterable[Union[str, Mapping[str, Any]]]] = None,
        world: Union[str, "World", None] = None,
        memory: Optional[Dict[str, Any]] = None,
        options: Optional[Dict[str, Any]] = None,
        model: Any = None,
    ) -> "Npc":
        """``npc/create``."""
        result = await self.request("npc/create", _params(
            npc=npc, persona=persona, tools=self._tools_param(tools),
            world=_world_id(world), memory=memory, options=options, model=model))
        created = Npc(self, result["npc"])
        created.tools = result.get("tools", [])
        created.warnings = result.get("warnings", [])
        created._model = model
        return created

    async def restore_npc(
        self,
        state: Dict[str, Any],
        *,
        npc: Optional[str] = None,
        tools: Optional[Iterable[Union[str, Mapping[str, Any]]]] = None,
        world: Union[str, "World", None] = None,
        options: Optional[Dict[str, Any]] = None,
        model: Any = None,
    ) -> "Npc":
        """``npc/restore`` from a save made with :meth:`Npc.state`. ``npc``, ``tools``, ``world`` and ``options``
        default to the saved ones (None leaves them out); :data:`NULL` sends ``null``, which wins over the save:
        ``world=NULL`` restores the NPC without a world."""
        result = await self.request("npc/restore", _params(
            state=state, npc=npc, tools=self._tools_param(tools),
            world=_world_id(world), options=options, model=model))
        restored = Npc(self, result["npc"])
        restored.tools = result.get("tools", [])
        restored.warnings = result.get("warnings", [])
        restored._model = model
        return restored

    def npc(self, npc_id: str) -> "Npc":
        """A handle for an existing NPC (its id; its own handle also works). A persona (a dict) is a TypeError
        that says to create the NPC with :meth:`create_npc`."""
        return Npc(self, _handle_id(npc_id, Npc, "bridge.npc()"))

    async def list_npcs(self) -> List[Dict[str, Any]]:
        """``npc/list``."""
        return (await self.request("npc/list"))["npcs"]

    # ------------------------------------------------------------------ decisions and content

    async def decide(
        self,
        situation: Any,
        options: Sequence[Union[str, Mapping[str, Any]]],
        *,
        actor: Any = None,
        context: Any = None,
        tools: Optional[Iterable[Union[str, Mapping[str, Any]]]] = None,
        tool_choice: Any = None,
        fallback_option_id: Optional[str] = None,
        instructions: Optional[str] = None,
        temperature: Optional[float] = None,
        max_tool_rounds: Optional[int] = None,
        tool_timeout_seconds: Optional[float] = None,
        model: Any = None,
    ) -> Dict[str, Any]:
        """``decision/decide``: returns ``{"optionID", "reasoning", "confidence", "toolCalls", "usage", "isFallback"}``.
        ``options`` is a list of option ids and/or option objects (``{"id", "description"?}``). ``actor`` is a
        persona dict, or an NPC to decide as (an :class:`Npc` or its id)."""
        if isinstance(options, (str, bytes, Mapping)):
            raise TypeError("options must be a list of option ids or option objects; got %s %r (options=%r)"
                            % (type(options).__name__, options, _options_meant(options)))
        _check_actor(actor, "bridge.decide(): actor")
        return await self.request("decision/decide", _params(
            situation=situation, options=list(options), actor=actor, context=context,
            tools=self._tools_param(tools), toolChoice=tool_choice, fallbackOptionID=fallback_option_id,
            instructions=instructions, temperature=temperature, maxToolRounds=max_tool_rounds,
            toolTimeoutSeconds=tool_timeout_seconds, model=model))

    async def decide_many(
        self,
        requests: Sequence[Mapping[str, Any]],
        *,
        max_concurrency: Optional[int] = None,
        instructions: Optional[str] = None,
        temperature: Optional[float] = None,
        max_tool_rounds: Optional[int] = None,
        tool_timeout_seconds: Optional[float] = None,
        model: Any = None,
    ) -> List[Dict[str, Any]]:
        """``decision/decideMany``: results in request order; a failed one is ``{"error": {...}}``. ``requests`` is
        a list of dicts with the protocol's keys (``situation``, ``options``, ``actor``, ``context``, ``tools``,
        ``toolChoice``, ``fallbackOptionID``); the settings (``model``, ``temperature``, …) are the call's, one for
        all its decisions, and a request that holds one is a TypeError before anything is sent. The bridge's
        warnings (an unknown key) are logged (logger ``open_apple_models``, WARNING)."""
        result = await self.request("decision/decideMany", _params(
            requests=_decision_requests(requests), maxConcurrency=max_concurrency, instructions=instructions,
            temperature=temperature, maxToolRounds=max_tool_rounds, toolTimeoutSeconds=tool_timeout_seconds,
            model=model))
        _log_warnings("bridge.decide_many()", result)
        return result["results"]

    async def generate(
        self,
        prompt: str,
        schema: Dict[str, Any],
        *,
        instructions: Optional[str] = None,
        context: Any = None,
        tools: Optional[Iterable[Union[str, Mapping[str, Any]]]] = None,
        tool_timeout_seconds: Optional[float] = None,
        temperature: Optional[float] = None,
        model: Any = None,
    ) -> Any:
        """``content/generate``: returns the generated ``content`` (JSON matching ``schema``). The bridge's warnings
        (an object of the schema without ``properties``, generated as ``{}``; an unknown key) are logged (logger
        ``open_apple_models``, WARNING): the result is the content alone."""
        result = await self.request("content/generate", _params(
            prompt=prompt, schema=schema, instructions=instructions, context=context,
            tools=self._tools_param(tools), toolTimeoutSeconds=tool_timeout_seconds, temperature=temperature,
            model=model))
        _log_warnings("bridge.generate()", result)
        return result["content"]


async def _cancellable(bridge: Bridge, awaitable: Awaitable[Any], cancel_method: str, cancel_params: Dict[str, Any],
                       method: str, timeout: Optional[float], events: _Events) -> Any:
    """Awaits a turn; on timeout or task cancellation, cancels it on the bridge too, and its callbacks get no
    more events from the moment the task is cancelled (or the timeout passes), those already read included."""
    task = asyncio.ensure_future(awaitable)
    waiting = asyncio.shield(task)  # cancelled at once with the task awaiting it (Task.cancel cancels what it awaits)
    events.waiting = waiting
    current = asyncio.current_task()
    cancelling = getattr(current, "cancelling", None)  # Python 3.11+
    cancels_before = cancelling() if cancelling is not None else 0
    timed_out = False
    timer = None
    if timeout is not None:
        def expire() -> None:
            nonlocal timed_out
            timed_out = True
            events.stopped = True
            waiting.cancel()

        timer = asyncio.get_running_loop().call_later(max(timeout, 0), expire)
    try:
        return await waiting
    except asyncio.CancelledError:
        events.stopped = True
        for target, target_id in cancel_params.items():
            bridge._note_given_up(method, target, target_id)
        await _send_cancel(bridge, cancel_method, cancel_params)
        _discard(task)
        if timed_out and not (cancelling is not None and cancelling() > cancels_before):
            raise BridgeError(TIMEOUT, "timeout", "'%s' did not finish within %d ms; it was cancelled."
                              % (method, round(timeout * 1000))) from None
        raise
    finally:
        if timer is not None:
            timer.cancel()


#: The methods that run after the NPC's or session's current turn (PROTOCOL.md §2.3): sent from inside a handler of
#: that turn's tool, they wait for the turn, which waits for the handler, until the tool's timeout.
_QUEUED_METHODS = frozenset([
    "npc/talk", "npc/update", "npc/reset", "npc/state", "session/respond", "session/reset", "session/compact",
    "session/setInstructions", "session/setContextNote", "session/setTools"])


def _work_of(params: Any) -> Optional[str]:
    """Whose queued work a request is: ``NPC 'gorm'`` / ``session 'guard'``, or None."""
    if isinstance(params, Mapping):
        if isinstance(params.get("npc"), str):
            return "NPC '%s'" % params["npc"]
        if isinstance(params.get("session"), str):
            return "session '%s'" % params["session"]
    return None


def _turn_work_of(method: str, params: Any) -> Optional[str]:
    """``npc gorm`` for an ``npc/*`` request naming its NPC, ``session guard`` for a ``session/*`` one, else None."""
    for kind in ("npc", "session"):
        if method.startswith(kind + "/") and isinstance(params, Mapping) and isinstance(params.get(kind), str):
            return "%s %s" % (kind, params[kind])
    return None


class _ToolRun:
    """A tool call whose handler runs: whose turn made it, and the requests of that NPC or session sent since
    (they wait for the turn)."""

    __slots__ = ("name", "work", "queued")

    def __init__(self, name: str, work: Optional[str]):
        self.name = name
        self.work = work
        self.queued: List[str] = []


#: The requests that cancel all the work of the NPC or session they name → why its requests in flight were
#: cancelled when one is sent by hand (None: a cancel, whose -32009 is the one the game asked for).
_ENDING_METHODS = {
    "npc/cancel": None,
    "session/cancel": None,
    "npc/delete": "an 'npc/delete' request deleted the NPC.",
    "session/delete": "a 'session/delete' request deleted the session.",
}

#: The same sent as a notification with :meth:`Bridge.notify` (no answer comes, but the work ends all the same).
_ENDING_NOTIFICATIONS = {
    "npc/cancel": None,
    "session/cancel": None,
    "npc/delete": "an 'npc/delete' notification deleted the NPC.",
    "session/delete": "a 'session/delete' notification deleted the session.",
}

#: The cancel notification of the requests that start a turn: method → (cancel method, its target member).
_CANCELS = {"session/respond": ("session/cancel", "session"), "npc/talk": ("npc/cancel", "npc")}


async def _send_cancel(bridge: Bridge, method: str, params: Dict[str, Any]) -> None:
    """Sends a cancel notification; while another write waits (a bridge that stopped reading, a long message),
    it is sent after that one, and the caller's timeout or cancellation is not held up by it."""
    async def send() -> None:
        try:
            await bridge.notify(method, params)
        except BridgeError:
            pass

    lock = bridge._write_lock
    if lock is not None and lock.locked():
        _discard(asyncio.ensure_future(send()))
        return
    await send()


def _discard(task: "asyncio.Future[Any]") -> None:
    task.add_done_callback(lambda t: t.cancelled() or t.exception())


class Session:
    """An agent session (``session/*``)."""

    def __init__(self, bridge: Bridge, session_id: str):
        self.bridge = bridge
        self.id = session_id
        self.warnings: List[str] = []

    def __repr__(self) -> str:
        return "Session(%r)" % self.id

    async def respond(
        self,
        prompt: str,
        *,
        schema: Optional[Dict[str, Any]] = None,
        on_text: Optional[Callback] = None,
        on_event: Optional[Callback] = None,
        stream: Optional[bool] = None,
        tool_choice: Any = None,
        max_tool_rounds: Optional[int] = None,
        max_tool_calls: Optional[int] = None,
        enabled_tools: Optional[List[str]] = None,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """Runs one turn; returns the ``session/respond`` result (``text``, ``structured``, ``toolCalls``,
        ``usage``, ``steps``). ``on_text(text)`` gets the whole answer so far after every change;
        ``on_event(event)`` every ``session/event``. Streaming is on when either callback is given.
        On ``timeout`` (seconds) or when the awaiting task is cancelled, the turn is cancelled on the bridge
        (``session/cancel``, which also cancels this session's queued work); the callbacks get no more events
        from then on, nor once one of them raised."""
        _check_callable(on_text, "on_text")
        _check_callable(on_event, "on_event")
        handler = None
        if on_text is not None or on_event is not None:
            def handler(event: Dict[str, Any]) -> Any:
                result = on_event(event) if on_event is not None else None
                if on_text is not None and event.get("type") == "text":
                    text_result = on_text(event.get("text", ""))
                    if inspect.isawaitable(text_result):
                        return _gather_awaitables(result, text_result)
                return result

        params = _params(session=self.id, prompt=prompt, schema=schema,
                         stream=stream if stream is not None else (True if handler else None),
                         toolChoice=tool_choice, maxToolRounds=max_tool_rounds, maxToolCalls=max_tool_calls,
                         enabledTools=enabled_tools)
        events = _Events()
        return await _cancellable(
            self.bridge, self.bridge.request("session/respond", params, on_event=handler, _events=events),
            "session/cancel", {"session": self.id}, "session/respond", timeout, events)

    def cancel(self) -> Awaitable[int]:
        """``session/cancel``: cancels the running turn (its ``respond`` raises a -32009 ``cancelled``
        BridgeError) and the queued work; returns how many operations were cancelled. From the call on (before it
        is awaited), the turn's ``on_text`` and ``on_event`` get nothing more, also the text already on its way (a
        turn that had already ended still returns its result), as when the task awaiting it is cancelled::

            await guide.cancel()  # the player walked away: the answer stops where it was
        """
        self.bridge._silence("session " + self.id)
        return _as_written(self._cancel(), type(self).__name__ + ".cancel")

    async def _cancel(self) -> int:
        return (await self.bridge.request("session/cancel", {"session": self.id}))["cancelled"]

    def delete(self) -> Awaitable[None]:
        """``session/delete``: cancels the session's work (a running ``respond`` raises a -32009 ``cancelled``
        BridgeError whose message says ``session.delete()`` deleted the session, or returns its result when it had
        already ended) and frees it. From the call on (before it is awaited), the turn's ``on_text`` and
        ``on_event`` get nothing more, as with :meth:`cancel`::

            await guide.delete()  # the level ends: the answer stops where it was
        """
        self.bridge._silence("session " + self.id)
        return _as_written(self._delete(), type(self).__name__ + ".delete")

    async def _delete(self) -> None:
        await self.bridge.request("session/delete", {"session": self.id},
                                  _why="session.delete() deleted the session.")

    async def reset(self) -> None:
        """``session/reset``."""
        await self.bridge.request("session/reset", {"session": self.id})

    async def transcript(self) -> Dict[str, Any]:
        """``session/transcript``: the transcript to save (pass it as ``history`` to resume)."""
        return (await self.bridge.request("session/transcript", {"session": self.id}))["transcript"]

    async def set_instructions(self, instructions: Optional[str]) -> None:
        """``session/setInstructions``."""
        await self.bridge.request("session/setInstructions", {"session": self.id, "instructions": instructions})

    async def set_context_note(self, note: Optional[str]) -> None:
        """``session/setContextNote``."""
        await self.bridge.request("session/setContextNote", {"session": self.id, "note": note})

    async def set_tools(self, tools: Iterable[Union[str, Mapping[str, Any]]]) -> List[str]:
        """``session/setTools``: returns the warnings."""
        result = await self.bridge.request("session/setTools",
                                           {"session": self.id, "tools": self.bridge.tool_definitions(tools)})
        return result.get("warnings", [])

    async def compact(self, keep_recent_turns: Optional[int] = None,
                      summary_instructions: Optional[str] = None) -> Optional[str]:
        """``session/compact``: returns the summary (or None)."""
        result = await self.bridge.request("session/compact", _params(
            session=self.id, keepRecentTurns=keep_recent_turns, summaryInstructions=summary_instructions))
        return result.get("summary")


class _gather_awaitables:
    """The awaitables among ``values``, awaited in turn; ``close()`` drops them unstarted (no "never awaited"
    warning)."""

    def __init__(self, *values: Any):
        self.values = [value for value in values if inspect.isawaitable(value)]

    def __await__(self) -> Any:
        return self._run().__await__()

    async def _run(self) -> None:
        for value in self.values:
            await value

    def close(self) -> None:
        for value in self.values:
            _close_unstarted(value)


class Npc:
    """A non-player character (``npc/*``)."""

    def __init__(self, bridge: Bridge, npc_id: str):
        self.bridge = bridge
        self.id = npc_id
        self.tools: List[str] = []
        self.warnings: List[str] = []
        self._model: Any = None  # the model it was created or restored with (a save does not hold it)

    def __repr__(self) -> str:
        return "Npc(%r)" % self.id

    async def talk(
        self,
        line: str,
        *,
        context: Any = None,
        on_line: Optional[Callback] = None,
        on_emotion: Optional[Callback] = None,
        on_event: Optional[Callback] = None,
        tool_choice: Any = None,
        timeout: Optional[float] = None,
    ) -> Dict[str, Any]:
        """One dialogue turn; returns the ``npc/talk`` result (``line``, ``emotion``, ``playerOptions``,
        ``endsConversation``, ``toolCalls``, ``relationship``, ``isFallback``, ``usage``).
        ``on_line(line)`` gets the whole line so far after every change (typewriter), ``on_emotion(emotion)``
        the emotion as soon as it is known, ``on_event(event)`` every ``npc/event`` (``emotion``, ``lineDelta``,
        ``lineReset``, ``toolCallStarted``, ``toolCallCompleted``: an NPC's turn has no ``modelStep``, unlike a
        session's). Timeout and task cancellation send ``npc/cancel`` (which also cancels this NPC's work queued
        behind the turn), and the callbacks get no more events from then on; so does a callback that raised.

        Example (the player walks away mid-line)::

            turn = asyncio.ensure_future(gorm.talk("Hello", on_line=bubble.show))
            ...
            turn.cancel()  # bubble.show is not called again for this turn
        """
        _check_callable(on_line, "on_line")
        _check_callable(on_emotion, "on_emotion")
        _check_callable(on_event, "on_event")
        handler = None
        if on_line is not None or on_emotion is not None or on_event is not None:
            shown = [""]

            def handler(event: Dict[str, Any]) -> Any:
                results = [on_event(event) if on_event is not None else None]
                kind = event.get("type")
                if kind in ("lineDelta", "lineReset"):
                    shown[0] = shown[0] + str(event.get("delta", "")) if kind == "lineDelta" else str(event.get("line", ""))
                    if on_line is not None:
                        results.append(on_line(shown[0]))
                elif kind == "emotion" and on_emotion is not None:
                    results.append(on_emotion(event.get("emotion")))
                if any(inspect.isawaitable(r) for r in results):
                    return _gather_awaitables(*results)
                return None

        params = _params(npc=self.id, line=line, context=context, stream=True if handler else None,
                         toolChoice=tool_choice)
        events = _Events()
        return await _cancellable(
            self.bridge, self.bridge.request("npc/talk", params, on_event=handler, _events=events),
            "npc/cancel", {"npc": self.id}, "npc/talk", timeout, events)

    async def bark(self, situation: Any = None) -> str:
        """``npc/bark``: a short ambient line."""
        return (await self.bridge.request("npc/bark", _params(npc=self.id, situation=situation)))["line"]

    async def state(self, settle: bool = True) -> Dict[str, Any]:
        """``npc/state``: the save state (store it whole; restore with :meth:`Bridge.restore_npc`)."""
        return (await self.bridge.request("npc/state", {"npc": self.id, "settle": settle}))["state"]

    async def update(
        self,
        *,
        persona: Optional[Dict[str, Any]] = None,
        options: Optional[Dict[str, Any]] = None,
        memory: Optional[Dict[str, Any]] = None,
        tools: Optional[Iterable[Union[str, Mapping[str, Any]]]] = None,
    ) -> List[str]:
        """``npc/update`` (merge patches for persona, options and memory): returns the warnings."""
        result = await self.bridge.request("npc/update", _params(
            npc=self.id, persona=persona, options=options, memory=memory, tools=self.bridge._tools_param(tools)))
        return result.get("warnings", [])

    async def reset(self, clear_memory: bool = False) -> None:
        """``npc/reset``."""
        await self.bridge.request("npc/reset", {"npc": self.id, "clearMemory": clear_memory})

    def cancel(self) -> Awaitable[int]:
        """``npc/cancel``: cancels the running talk (its ``talk`` raises a -32009 ``cancelled`` BridgeError) and
        the queued requests; returns how many were cancelled. From the call on (before it is awaited), the talk's
        ``on_line``, ``on_emotion`` and ``on_event`` get nothing more, also the rest of a line already on its way
        (a talk that had already ended still returns its reply), as when the task awaiting it is cancelled::

            await gorm.cancel()  # the player walked away: the line stops where it was
        """
        self.bridge._silence("npc " + self.id)
        return _as_written(self._cancel(), type(self).__name__ + ".cancel")

    async def _cancel(self) -> int:
        return (await self.bridge.request("npc/cancel", {"npc": self.id}))["cancelled"]

    def delete(self) -> Awaitable[None]:
        """``npc/delete``: cancels the NPC's work (a running ``talk`` raises a -32009 ``cancelled`` BridgeError whose
        message says ``npc.delete()`` deleted the NPC, or returns its reply when it had already ended) and frees it.
        From the call on (before it is awaited), the talk's ``on_line``, ``on_emotion`` and ``on_event`` get nothing
        more, as with :meth:`cancel`. From a callback, await it in a task (``asyncio.ensure_future(gorm.delete())``,
        or a task of the game's that calls it): a task a callback starts takes its first step before the next event
        is handled, so a ``delete()`` it calls before it first waits for something stops the line there. To load a
        save over a living NPC, use :meth:`restore`::

            await gorm.delete()  # Gorm dies mid-sentence: the line stops where it was
        """
        self.bridge._silence("npc " + self.id)
        return _as_written(self._delete(), type(self).__name__ + ".delete")

    async def _delete(self) -> None:
        await self.bridge.request("npc/delete", {"npc": self.id}, _why="npc.delete() deleted the NPC.")

    def restore(
        self,
        state: Dict[str, Any],
        *,
        tools: Optional[Iterable[Union[str, Mapping[str, Any]]]] = None,
        world: Union[str, "World", None] = None,
        options: Optional[Dict[str, Any]] = None,
        model: Any = None,
    ) -> Awaitable["Npc"]:
        """Replaces this NPC with a save (``npc/delete``, then ``npc/restore`` under its id): the player loads a
        save over a living NPC. Returns the restored NPC's handle. ``tools``, ``world`` and ``options`` are as in
        :meth:`Bridge.restore_npc`; the model is not saved, and defaults to the one this handle was created or
        restored with (a handle from :meth:`Bridge.npc` has none: the bridge's default model). A running ``talk``
        raises a -32009 ``cancelled`` BridgeError that says ``npc.restore()`` replaced the NPC (or returns its reply
        when it had already ended), and from the call on (before it is awaited) its ``on_line``, ``on_emotion`` and
        ``on_event`` get nothing more, as with :meth:`delete`. When the bridge refuses the save (a field edited by
        hand), it raises that error and the NPC is put back as it was (its completed turns, memory, tools and
        world; the turn that was running stays cancelled). A value JSON cannot send raises here, before anything is
        sent. Once begun, a restore runs to its end: when the task awaiting it is cancelled (the scene unloads, a
        timeout), the cancellation comes through once the NPC is the save's (or, refused, back as it was), never
        between the delete and the restore, and this handle goes on addressing it::

            gorm = await gorm.restore(save)  # the player loads a save: the story stops where it was
        """
        params = _params(state=state, npc=self.id, tools=self.bridge._tools_param(tools), world=_world_id(world),
                         options=options, model=model if model is not None else self._model)
        # Checked before the delete: a save the client refuses must not cost the NPC.
        self.bridge._encode({"jsonrpc": "2.0", "id": "", "method": "npc/restore", "params": params}, "npc.restore()")
        self.bridge._silence("npc " + self.id)
        return _as_written(self._restore(params), type(self).__name__ + ".restore")

    async def _restore(self, params: Dict[str, Any]) -> "Npc":
        # Once begun, a restore runs to its end: a task cancelled between the delete and the restore (the scene
        # unloads, a timeout) would cost the game the NPC. The cancellation comes through once the NPC is the
        # save's (or, refused, back as it was), and this handle, of the same id, goes on addressing it.
        replacing = asyncio.ensure_future(self._replace(params))
        try:
            return await asyncio.shield(replacing)
        except asyncio.CancelledError:
            _discard(replacing)
            try:
                await replacing
            except (BridgeError, asyncio.CancelledError):
                pass
            raise

    async def _replace(self, params: Dict[str, Any]) -> "Npc":
        bridge = self.bridge
        # Sent in this order, one after the other without waiting: the NPC as it is now (answered at once), the
        # delete, the restore. Tasks start in the order they were made, and the writes keep that order.
        current = asyncio.ensure_future(bridge.request("npc/state", {"npc": self.id, "settle": False}))
        deleted = asyncio.ensure_future(bridge.request(
            "npc/delete", {"npc": self.id}, _why="npc.restore() replaced the NPC (it deletes it first)."))
        restoring = asyncio.ensure_future(bridge.request("npc/restore", params))
        for task in (current, deleted):
            _discard(task)
        try:
            result = await restoring
        except BridgeError:
            # A refused save must not cost the NPC: put back the one that was deleted for it.
            previous = None
            try:
                previous = (await current)["state"]
            except BridgeError:
                pass
            if previous is not None:
                try:
                    await bridge.request("npc/restore", _params(state=previous, npc=self.id, model=self._model))
                except BridgeError:
                    pass
            raise
        restored = Npc(bridge, result["npc"])
        restored.tools = result.get("tools", [])
        restored.warnings = result.get("warnings", [])
        restored._model = params.get("model")
        return restored


class Subscription:
    """A ``world/subscribe`` subscription; ``await unsubscribe()`` ends it. ``warnings`` holds what the bridge
    said of its path: one warning when nothing is there yet (most often a typo), naming what the world holds at
    the nearest existing ancestor; ``[]`` otherwise."""

    def __init__(self, world: "World", subscription_id: str, path: str, warnings: Optional[List[str]] = None):
        self.world = world
        self.id = subscription_id
        self.path = path
        self.warnings: List[str] = list(warnings or [])
        self._ended = False

    def __repr__(self) -> str:
        return "Subscription(%r, %r)" % (self.id, self.path)

    def unsubscribe(self) -> "asyncio.Future[None]":
        """``world/unsubscribe``. The callback is not called again from the moment this is called, also for
        changes the bridge sent before it read the request (an NPC's turn still writing); await the result for
        the bridge's answer. Calling it again, or after ``world.delete()`` ended the subscription on the bridge,
        does nothing."""
        bridge = self.world.bridge
        known = bridge._subscriptions.pop(self.id, None) is not None or self._ended
        self._ended = True

        async def send() -> None:
            try:
                await bridge.request("world/unsubscribe", {"subscription": self.id})
            except BridgeError as error:
                # Already ended on the bridge (unsubscribed before, or its world deleted): what was asked.
                if not (known and error.data_code == "subscription_not_found"):
                    raise

        return asyncio.ensure_future(send())


class World:
    """A shared world-state blackboard (``world/*``). Paths are dot paths (``"player.gold"``; ``""`` = root)."""

    def __init__(self, bridge: Bridge, world_id: str):
        self.bridge = bridge
        self.id = world_id

    def __repr__(self) -> str:
        return "World(%r)" % self.id

    async def get(self, path: str = "", default: Any = None) -> Any:
        """The value at ``path``, or ``default`` when absent."""
        result = await self.bridge.request("world/get", {"world": self.id, "path": path})
        return result.get("value") if result.get("exists") else default

    async def set(self, path: str, value: Any) -> int:
        """``world/set``: returns the new version."""
        return (await self.bridge.request("world/set", {"world": self.id, "path": path, "value": value}))["version"]

    async def merge(self, patch: Dict[str, Any], path: str = "") -> int:
        """``world/merge`` (RFC 7386 merge patch): returns the new version."""
        return (await self.bridge.request("world/merge", {"world": self.id, "path": path, "patch": patch}))["version"]

    async def remove(self, path: str) -> Dict[str, Any]:
        """``world/remove``: returns ``{"removed", "oldValue", "version", ...}``."""
        return await self.bridge.request("world/remove", {"world": self.id, "path": path})

    async def snapshot(self) -> Dict[str, Any]:
        """``world/snapshot``: the whole state."""
        return (await self.bridge.request("world/snapshot", {"world": self.id}))["state"]

    async def subscribe(self, callback: Callback, path: str = "") -> Subscription:
        """Calls ``callback(change)`` for every ``world/changed`` at, inside or above ``path``; ``change`` has
        ``world``, ``subscription``, ``path`` and ``oldValue`` / ``newValue`` (absent when created / removed).
        ``change["path"]`` is the path that changed and the values are the ones there: a write above ``path`` (its
        parent set whole, a save loaded at the root) comes with the parent's values, yours inside them; when it is
        not ``path``, read yours with ``await world.get(path)``."""
        if not callable(callback):
            raise TypeError("callback must be a function (subscribe(callback, path=...)); got %s %r"
                            % (type(callback).__name__, callback))
        bridge = self.bridge

        def register(result: Dict[str, Any]) -> None:
            bridge._subscriptions[str(result["subscription"])] = callback

        result = await bridge.request("world/subscribe", {"world": self.id, "path": path}, _on_result=register)
        return Subscription(self, result["subscription"], result.get("path", path), result.get("warnings"))

    async def delete(self) -> None:
        """``world/delete``."""
        await self.bridge.request("world/delete", {"world": self.id})


if __name__ == "__main__":  # pragma: no cover - a quick smoke check: python3 open_apple_models.py
    async def _main() -> None:
        async with Bridge() as bridge:
            print("bridge", bridge.server_info.get("server"), file=sys.stderr)
            session = await bridge.create_session(model={"type": "scripted", "steps": [{"text": "Hello."}]})
            print((await session.respond("Hi"))["text"])

    asyncio.run(_main())
