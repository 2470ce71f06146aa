"""Remote graphs in a node: what runs on another server cannot be held here.

A ``langgraph.pregel.remote.RemoteGraph`` runs its nodes, its model and its tools on
the server it names. A gate on the local node that calls it sees only what comes back:
by then the remote tools have run. :func:`remote_graphs` says where a node meets one,
the same way the audit finds models (the node's runnable, the graph it is, and what its
code reaches through closures, defaults, bound objects and module globals), so that
``guard()`` can refuse a node that *is* a remote graph and warn about one its code calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["RemoteReach", "remote_graphs"]


@dataclass(frozen=True)
class RemoteReach:
    """Where a node meets remote graphs.

    ``nodes``: the node is a remote graph, or a graph one of whose nodes (at any depth)
    is one. ``called``: remote graphs the node's code reaches (a closure, a global, an
    attribute of a bound object, a ``RemoteGraph(...)`` built in its body).
    """

    nodes: tuple[str, ...] = ()
    called: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.nodes or self.called)


def remote_graphs(runnable: Any, where: str = "the node") -> RemoteReach:
    """Where ``runnable`` (a node's runnable) meets a ``RemoteGraph``.

    Example:
        ```python
        from langgraph.pregel.remote import RemoteGraph

        remote = RemoteGraph("agent", url="http://localhost:2024")
        assert remote_graphs(remote).nodes
        ```
    """
    from trustgate._audit._crossings import _static_crossings
    from trustgate._audit._discovery import _Finder

    finder = _Finder(root=runnable, subgraphs=_static_crossings)
    finder.walk(runnable, where)
    return RemoteReach(
        tuple(dict.fromkeys(finder.found.remote_nodes)),
        tuple(dict.fromkeys(finder.found.remotes)),
    )
