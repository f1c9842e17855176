"""Which servers a drop-in found without the module, learnt once per server
a client talks to, from the first module command's ``unknown command``.

"A server a client talks to" is one connection pool's server: a
``redis.Redis`` (sync or asyncio) sends every command through its
``connection_pool``, whose connections all go to one address, so the
answer is kept per pool (clients sharing a pool share it); a
``RedisCluster`` (sync or asyncio) keeps one per node (``host:port``), so a
cluster whose nodes differ uses the module on the nodes that have it and
the library's way on the others, each key on its node's way.

Nothing is sent to find out. A drop-in sends its module command (alone,
never in a pipeline or ``MULTI``, so the reply is that command's own); the
reply ``unknown command`` (``ModuleNotLoaded``), which changes nothing on
the server, marks the pool (or the key's node) as without the module, and
the call is made again the library's way; from then on that pool's (or
node's) calls go the library's way at once. A server with the module is
never marked: its calls cost one lookup here and no command more. The mark
stays for the pool's life: a server that gains the module (``MODULE
LOAD``, or a restart with ``loadmodule``) is used by new clients (a new
``Redis``, pool, cluster client or ``limits`` storage), and a marked pool
keeps the library's way, whose keys are the library's."""

import weakref
from typing import Any, Set

_WITHOUT: "weakref.WeakKeyDictionary[Any, Set[str]]" = weakref.WeakKeyDictionary()
"""Per connection pool (a ``Redis``) or cluster client: the servers found
without the module (``""`` for a pool's one server, node names for a
cluster's)."""


def _owner(client: Any) -> Any:
    """What keeps the answer: ``client``'s connection pool, or the cluster
    client itself (a cluster client has no pool of its own)."""
    pool = getattr(client, "connection_pool", None)
    return client if pool is None else pool


def _server(client: Any, key: Any) -> str:
    """The server ``key``'s commands go to: ``""`` for a pool's one
    server, the name (``host:port``) of the node serving it for a
    cluster client."""
    if getattr(client, "connection_pool", None) is not None:
        return ""
    name: str = client.get_node_from_key(key).name
    return name


def without_module(client: Any, key: Any) -> bool:
    """Whether ``client``'s commands on ``key`` go to a server found
    without the module (no command is sent)."""
    marked = _WITHOUT.get(_owner(client))
    if not marked:  # a server with the module: nothing more to look up
        return False
    return _server(client, key) in marked


def found_without_module(client: Any, key: Any) -> None:
    """Marks the server of ``key`` as without the module: ``client`` (and
    every client on its pool) then goes the library's way there."""
    owner = _owner(client)
    server = _server(client, key)
    marked = _WITHOUT.get(owner)
    if marked is None:
        _WITHOUT[owner] = {server}
    else:
        marked.add(server)
