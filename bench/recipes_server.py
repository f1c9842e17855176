"""The command line of the Python benches: `PORT [LABEL]`, a server with the
module loaded on 127.0.0.1:PORT (LABEL names it in the tables)."""

import sys
from typing import Tuple

import redis


def server_from_args(usage: str) -> Tuple[int, str, redis.Redis]:
    """The port, label and a client of the server the command line names;
    exits with ``usage`` on bad arguments, or when the module is not loaded."""
    if len(sys.argv) not in (2, 3):
        sys.exit(usage)
    port = int(sys.argv[1])
    label = sys.argv[2] if len(sys.argv) == 3 else f"127.0.0.1:{port}"
    client = redis.Redis(port=port)
    names = [module.get(b"name", module.get("name")) for module in client.module_list()]
    if not any(name in ("recipes", b"recipes") for name in names):
        sys.exit(f"no recipes module loaded on port {port}")
    return port, label, client
