"""A create's ``moderation`` (openai 3.57): the request's input and the response's output scored by a
moderation model the server serves, and blocked where the policy says ``block``.

Input is moderated before the model runs: blocked, the model never sees it and the response ends
``incomplete`` (``content_filter``) with no output. Output is moderated once the model is done; blocked,
it is withheld (the response ends the same way, its output empty), so a streamed response whose output
may be blocked sends its events only once the output has passed (see :meth:`ModerationRun.hold`). Both
results are reported on ``response.moderation``. A moderation that fails is reported as an ``error``
result; in ``block`` mode it blocks (what was not judged is not let through).

A request feature (:class:`ModerationFeature`, see ``_features``): it screens at the ``screen_input``,
``hold`` and ``screen_output`` points, and only for creates that name ``moderation``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from responsa.backends import BackendRegistry, Moderates, ModerationVerdict, read_texts
from responsa.protocol import (
    CreateResponseRequest,
    InvalidRequest,
    Item,
    ResponsaError,
    ResponseObject,
    StreamEvent,
    new_id,
)

from ._features import FeatureRun, Turns

__all__ = ["ModerationFeature", "ModerationRun", "classify", "verdict_result"]

_NOT_RUN = {"type": "error", "code": "input_blocked", "message": "The model did not run: its input was blocked."}


class ModerationFeature:
    """``moderation``, by the moderation models the server's backends serve."""

    name = "moderation"
    items: frozenset[type] = frozenset()
    fields: frozenset[str] = frozenset({"moderation"})

    def __init__(self, backends: BackendRegistry) -> None:
        self._backends = backends

    def open(self, request: CreateResponseRequest, context_types: frozenset[type]) -> ModerationRun | None:
        """The moderation a create asked for, or None; a 400 naming ``moderation.model`` where the
        server serves no such moderation model (never acceptance without effect)."""
        options = request.moderation
        if options is None:
            return None
        backend = _moderator(self._backends, options.model, "moderation.model")
        policy = options.policy
        input_mode = policy.input.mode if policy is not None and policy.input is not None else "score"
        output_mode = policy.output.mode if policy is not None and policy.output is not None else "score"
        return ModerationRun(options.model, backend, input_mode, output_mode)


async def classify(backends: BackendRegistry, texts: list[str], model: str | None) -> dict[str, Any]:
    """``POST /v1/moderations``: one result per text, by ``model`` (default: the first moderation model
    served), in OpenAI's shape."""
    served = backends.moderation_models()
    chosen = model or (served[0] if served else None)
    backend = _moderator(backends, chosen, "model")
    assert chosen is not None  # a backend serves it
    verdicts = await backend.moderate(chosen, texts)
    results = [{key: value for key, value in verdict_result(verdict, chosen).items() if key not in ("type", "model")}
               for verdict in verdicts]  # fmt: skip
    return {"id": new_id("modr", "-"), "model": chosen, "results": results}


def _moderator(backends: BackendRegistry, model: str | None, param: str) -> Moderates:
    """The backend serving ``model`` as a moderation model, or a 400 on ``param`` naming those served."""
    backend = backends.moderator(model) if model is not None else None
    if backend is None:
        served = backends.moderation_models()
        offer = f"served here: {', '.join(served)}" if served else "no moderation model is configured"
        raise InvalidRequest(f"The moderation model '{model}' is not served ({offer}).", param=param,
                             code="model_not_found")  # fmt: skip
    return backend


def verdict_result(verdict: ModerationVerdict, model: str) -> dict[str, Any]:
    """A verdict as a response's ``moderation_result`` (the shape of ``/v1/moderations`` results, typed)."""
    return {"type": "moderation_result", "model": model, "flagged": verdict.flagged,
            "categories": verdict.categories(), "category_scores": verdict.category_scores(),
            "category_applied_input_types": verdict.applied_input_types()}  # fmt: skip


@dataclass
class ModerationRun(FeatureRun):
    """One response's moderation: the model that judges, each side's mode, and the input's result."""

    model: str
    backend: Moderates
    input_mode: str
    output_mode: str
    input_result: dict[str, Any] = field(default_factory=dict)
    input_blocked: bool = False

    async def screen_input(self, items: Sequence[Item]) -> bool:
        """Moderate the request's input; True when it is blocked (the model must not read it)."""
        self.input_result, flagged = await self._judge(items)
        self.input_blocked = self.input_mode == "block" and flagged
        return self.input_blocked

    async def screen_output(self, response: ResponseObject) -> bool:
        """Moderate the output and report both results on ``response``; True when it is withheld."""
        if self.input_blocked:
            output, flagged = _NOT_RUN, False
        else:
            output, flagged = await self._judge(response.output)
        response.moderation = {"input": self.input_result, "output": output}
        return self.output_mode == "block" and flagged

    def hold(self, turns: Turns, finished: Callable[[], bool]) -> Turns:
        """Where the output may be withheld, a stream sends nothing of it before it passes."""
        return self._held(turns, finished) if self.output_mode == "block" else turns

    async def _held(self, turns: Turns, finished: Callable[[], bool]) -> Turns:
        """The run's events, held back until it ends: all of them if the output passed; else only its
        end, numbered on from the last event sent (nothing of the withheld output was)."""
        kept: list[StreamEvent] = []
        async for events in turns:
            if not finished():
                kept += events
                continue
            details = getattr(events[-1], "response", None) if events else None
            withheld = details is not None and details.incomplete_details is not None and \
                details.incomplete_details.reason == "content_filter"  # fmt: skip
            if withheld and kept:
                for offset, event in enumerate(events):
                    event.sequence_number = kept[0].sequence_number + offset
                yield events
            else:
                yield kept + events
            kept = []
        if kept:
            yield kept

    async def _judge(self, items: Sequence[Item]) -> tuple[dict[str, Any], bool]:
        """The result for the text of ``items``, and whether it counts as flagged (a failure does in
        ``block`` mode: see the module docstring)."""
        text = "\n".join(text for item in items for text in read_texts(item))
        try:
            (verdict,) = await self.backend.moderate(self.model, [text])
        except ResponsaError as error:
            return {"type": "error", "code": error.code or "moderation_failed", "message": error.message}, True
        return verdict_result(verdict, self.model), verdict.flagged
