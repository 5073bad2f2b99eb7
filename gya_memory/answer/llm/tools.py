"""Tool calls: what the model asks to run, and finding calls a model wrote as text.

Qwen2.5 writes ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``; the 1.5B Coder
model often writes the bare JSON object. :func:`parse_tool_calls` finds both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """The model asks for one tool to be run: ``name(**arguments)``."""

    id: str
    name: str
    arguments: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """The OpenAI form, as it goes back in an assistant message's ``tool_calls``."""
        return {
            "id": self.id,
            "type": "function",
            "function": {
                "name": self.name,
                "arguments": json.dumps(self.arguments, ensure_ascii=False),
            },
        }


_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_FENCE = re.compile(r"```[a-zA-Z]*")


def _call_from_object(obj: Any, tool_names: Collection[str], index: int) -> ToolCall | None:
    if not isinstance(obj, Mapping) or not isinstance(obj.get("name"), str):
        return None
    name = obj["name"]
    if tool_names and name not in tool_names:
        return None
    arguments = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    return ToolCall(id=f"call_{index}", name=name, arguments=arguments)


def _loads_lenient(text: str) -> Any:
    """``json.loads``, also accepting one extra pair of braces (``{{...}}``)."""
    try:
        return json.loads(text)
    except ValueError:
        stripped = text.strip()
        if stripped.startswith("{{") and stripped.endswith("}}"):
            try:
                return json.loads(stripped[1:-1])
            except ValueError:
                return None
        return None


def parse_tool_calls(text: str, tool_names: Collection[str] = ()) -> tuple[str, list[ToolCall]]:
    """Find tool calls a model wrote as text; return ``(text without them, calls)``.

    Two shapes are recognised: Qwen/Hermes ``<tool_call>{"name": ..., "arguments": {...}}
    </tool_call>`` blocks anywhere in the text, and a reply that *is* such a JSON object (or
    several), optionally in a code fence or with doubled braces. A call must name one of
    ``tool_names`` (when given). Text that is not a call is left alone.
    """
    if "<tool_call>" in text:
        calls: list[ToolCall] = []
        kept: list[str] = []
        last = 0
        for match in _TAGGED.finditer(text):
            call = _call_from_object(_loads_lenient(match.group(1)), tool_names, len(calls))
            if call is None:
                continue
            calls.append(call)
            kept.append(text[last : match.start()])
            last = match.end()
        kept.append(text[last:])
        return ("".join(kept).strip(), calls) if calls else (text, [])

    body = _FENCE.sub("", text).strip()
    if not body.startswith("{"):
        return text, []
    decoder = json.JSONDecoder()
    calls = []
    pos = 0
    while pos < len(body) and body[pos] == "{":
        obj: Any = None
        end = pos
        for skip in (0, 1):  # 1: the doubled-brace form {{...}}
            try:
                obj, end = decoder.raw_decode(body, pos + skip)
            except ValueError:
                continue
            if skip and body[end : end + 1] == "}":
                end += 1
            break
        call = _call_from_object(obj, tool_names, len(calls))
        if call is None:
            break
        calls.append(call)
        pos = end
        while pos < len(body) and body[pos] in " \t\r\n,":
            pos += 1
    if not calls:
        return text, []
    return body[pos:].strip(" \t\r\n`"), calls
