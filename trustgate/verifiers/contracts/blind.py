"""The model verifier: a blind, strictly parsed model judgment as a gate step.

It is the one verifier that calls a model, so it is fenced in: it sees only the
brief and the draft (never the producer's prompt, sources or state), its reply must
be exactly one strict JSON verdict (``parse_verdict``), and a reply that cannot be
parsed is an error, never a pass. The gate gives it exactly one retry (``retries=1``)
on an outage, a timeout or an unparseable verdict, then halts with the in-flight
content unreleased. Its pass never outweighs a deterministic failure: the gate's
policies act on any blocking finding, whoever produced it.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from trustgate._findings import Finding
from trustgate.errors import ConfigurationError
from trustgate.verifiers.base import Evidence
from trustgate.verifiers.contracts.verdict import parse_verdict

__all__ = ["DEFAULT_CONTRACT", "ModelVerifier"]

DEFAULT_CONTRACT = """You are a blind verifier. You see only a BRIEF and a DRAFT.
Judge fidelity to the brief only. A violation is one of:
- contradiction: the draft contradicts a judgment in the brief;
- altered citation: an approved citation reproduced with different wording;
- invented citation: a citation that is not in the brief's approved set.
Absence is never a violation: the draft may say more than the brief.
Reply with exactly one JSON object and nothing else:
{"pass": true, "issues": []} or {"pass": false, "issues": ["..."]}.
"pass" is true exactly when "issues" is empty."""


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json(indent=2)
    return json.dumps(value, indent=2, default=str, ensure_ascii=False)


class ModelVerifier:
    """A strict, source-blind model verifier.

    The draft is the gate's claims (e.g. ``LastAIText()``); the brief comes from the
    gate's ``brief`` evidence. Nothing else reaches the model.

    Example:
        ```python
        from trustgate.contracts import check_citations

        def closed_list(draft, evidence):
            return check_citations(draft, evidence.require("brief"))

        TrustGate(
            "blind",
            reads=LastAIText(),
            verifiers=[
                FunctionVerifier(closed_list, timeout=30),
                ModelVerifier(verifier_model, timeout=60),
            ],
            policy=Rerender(to="writer", then=Caveat()),
            evidence=EvidenceSources(brief=FromState("brief")),
        )
        ```
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        name: str = "model_verifier",
        timeout: float | None = 60.0,
        retries: int = 1,
        contract: str = DEFAULT_CONTRACT,
    ) -> None:
        if timeout is not None and timeout <= 0:
            raise ConfigurationError("timeout must be positive or None")
        if retries < 0:
            raise ConfigurationError("retries must be >= 0")
        self.model = model
        self.name = name
        self.timeout = timeout
        self.retries = retries
        self.contract = contract

    def messages(self, claims: Any, evidence: Evidence) -> list[BaseMessage]:
        """Exactly what the model sees: the contract, the brief and the draft."""
        brief = evidence.require("brief")
        return [
            SystemMessage(self.contract),
            HumanMessage(f"BRIEF:\n{_render(brief)}\n\nDRAFT:\n{_render(claims)}"),
        ]

    def verify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        reply = self.model.invoke(self.messages(claims, evidence))
        return parse_verdict(reply.text).findings(self.name)

    async def averify(self, claims: Any, evidence: Evidence) -> list[Finding]:
        reply = await self.model.ainvoke(self.messages(claims, evidence))
        return parse_verdict(reply.text).findings(self.name)

    def __repr__(self) -> str:
        return f"ModelVerifier({self.name!r}, timeout={self.timeout!r}, retries={self.retries})"
