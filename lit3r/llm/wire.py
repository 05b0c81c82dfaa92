"""What an OpenAI-compatible server must send back: the chat.completion body, checked before use.

The ``openai`` package parses a 200 body leniently (a body that is not JSON comes back as a
string, a JSON object of any shape as an object without ``choices``, bytes that are not UTF-8 as
a ``UnicodeDecodeError``), so the provider reads the raw body and :func:`reply_of` checks it:
UTF-8, not server-sent events (none are asked for: ``stream`` is never set), JSON, and the
:class:`Completion` shape (pydantic). Any other body is :class:`lit3r.errors.LLMError` with kind
``malformed``: one line that says what came back, and the caller's fallback (the extractive
answer); a server that keeps sending such bodies opens the breaker (:mod:`lit3r.llm.faults`).
"""

from __future__ import annotations

import json
from typing import Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lit3r.errors import FatalLLMError, LLMError, LLMRefusal
from lit3r.llm.faults import one_line
from lit3r.present.redact import redact

__all__ = ["Completion", "reply_of", "MALFORMED_FIX"]

#: The fix a malformed reply names.
MALFORMED_FIX = "check llm.base_url (an OpenAI-compatible /v1 endpoint) and that the server answers chat completions"


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class TextPart(_Loose):
    """One part of a content list (some servers send ``[{"type": "text", "text": ...}]``)."""

    type: str = "text"
    text: str = ""


class Message(_Loose):
    """The assistant's message: its text (or parts), or a refusal."""

    role: Optional[str] = None
    content: Optional[Union[str, list[TextPart]]] = None
    refusal: Optional[str] = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(p.text for p in self.content if p.type in ("text", "output_text"))
        return self.content or ""


class Choice(_Loose):
    message: Message
    finish_reason: Optional[str] = None


class Tokens(_Loose):
    prompt_tokens: Optional[int] = Field(None, ge=0)
    completion_tokens: Optional[int] = Field(None, ge=0)


class Completion(_Loose):
    """A chat.completion body: at least one choice with a message; usage optional."""

    choices: list[Choice] = Field(min_length=1)
    usage: Optional[Tokens] = None


def _malformed(name: str, what: str) -> LLMError:
    return FatalLLMError(f"{name}: the server's reply is not a chat completion ({what}): {MALFORMED_FIX}",
                         kind="malformed")


def reply_of(body: bytes, content_type: str, name: str) -> tuple[str, int, int, str]:
    """``(text, prompt_tokens, completion_tokens, finish_reason)`` of a 200 reply ``body`` with
    header ``content_type``; ``name``: the model's, for the messages. Raises LLMError (kind
    ``malformed``) for a body that is not UTF-8, is server-sent events, is not JSON or has not the
    :class:`Completion` shape, LLMRefusal for a refusal."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _malformed(name, f"not valid UTF-8 at byte {exc.start} of {len(body)}") from None
    start = text.lstrip()[:6].lower()
    if "text/event-stream" in content_type.lower() or start.startswith(("data:", "event:")):
        raise _malformed(name, "server-sent events, which were not asked for")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        kind = content_type.split(";")[0].strip() or "no content type"
        raise _malformed(name, f"not JSON ({kind}, {len(body)} bytes: {redact(one_line(text, 60))!r})") from None
    try:
        done = Completion.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "the body"
        raise _malformed(name, f"wrong JSON shape: {where}: {err['msg']}") from None
    choice = done.choices[0]
    if choice.message.refusal:
        raise LLMRefusal(f"{name} refused to answer: {redact(one_line(choice.message.refusal))}")
    usage = done.usage or Tokens()
    return choice.message.text(), usage.prompt_tokens or 0, usage.completion_tokens or 0, choice.finish_reason or ""
