"""Quickstart: put a trust gate behind a node of a graph you already have.

A code-review reviewer approves with a citation that does not replay; the gate overrides
the verdict. Run it with ``python examples/quickstart.py``.
"""

import json
from typing import Any

from langgraph.graph import START, StateGraph
from typing_extensions import TypedDict

from trustgate.pipelines import make_sample_repository
from trustgate.testing import lying_model


class State(TypedDict, total=False):
    repo: str
    manifest: dict[str, Any]
    review: dict[str, Any]


item = {
    "item": "Cap the order quantity",
    "status": "already_correct",
    "evidence": [{"file": "app/limits.py", "line": 4, "content": "MAX_QUANTITY = 100"}],
}
model = lying_model({"items": [item]}, repeat_last=True)


def reviewer(state: State) -> dict[str, Any]:  # the node you already have
    manifest = json.loads(model.invoke("Which review items are already handled?").text)
    return {"manifest": manifest, "review": {"verdict": "APPROVE", "summary": "Done."}}


builder = StateGraph(State)
builder.add_node("reviewer", reviewer)
builder.add_edge(START, "reviewer")
repo = make_sample_repository("code_review")  # a real git repository for the example

# --- the ten lines ---------------------------------------------------------------
import trustgate  # noqa: E402  (kept here: these are the ten lines)
from trustgate.files import ChangesManifest  # noqa: E402

gate = trustgate.TrustGate(
    "evidence_replay",
    reads=trustgate.FromKey("manifest", model=ChangesManifest),
    verifiers=[trustgate.CitationReplay()],
    policy=[  # override the verdict, and strike the manifest whose citations failed
        trustgate.Override("review.verdict", "REQUEST_CHANGES", note_field="review.summary"),
        trustgate.Override("manifest", None),
    ],
    evidence=trustgate.EvidenceSources(workspace=trustgate.FromState("repo")),
    passthrough=["review"],  # the verdict stands while the evidence replays
)
app = trustgate.guard(builder, {"reviewer": gate}).compile()
out = app.invoke({"repo": str(repo)})

assert out["review"]["verdict"] == "REQUEST_CHANGES"
assert out["review"]["summary"].endswith(
    "(Overridden: the claims behind this value failed verification)"
)
assert out["manifest"] is None

print(out["review"])
