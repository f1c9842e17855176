"""Flask-Limiter and SlowAPI on the ``recipes://`` storage: the one-line
change (``storage_uri``) in an application, a route limited to 2 a minute
answering 429 on the third request, and the moving window running on the
module's RATE commands."""

from typing import Dict

import pytest
from conftest import Server

pytest.importorskip("limits", reason="limits is not installed (pip install './clients/python[test]')")
flask_limiter = pytest.importorskip("flask_limiter", reason="Flask-Limiter is not installed")
slowapi = pytest.importorskip("slowapi", reason="SlowAPI is not installed")

import redis_recipes.drop_in  # noqa: E402,F401  (registers the schemes)


def rate_calls(server: Server) -> Dict[str, int]:
    stats = server.client().info("commandstats")
    return {name: stats.get(f"cmdstat_{name}", {}).get("calls", 0) for name in ("rate.limit", "rate.peek")}


def test_flask_limiter(server: Server) -> None:
    from flask import Flask
    from flask_limiter import Limiter
    from flask_limiter.util import get_remote_address

    server.client().flushall()
    before = rate_calls(server)
    app = Flask(__name__)
    limiter = Limiter(
        get_remote_address,
        app=app,
        storage_uri=f"recipes://127.0.0.1:{server.port}",
        strategy="moving-window",
    )

    @app.route("/hello")
    @limiter.limit("2/minute")
    def hello() -> str:
        return "hello"

    client = app.test_client()
    assert [client.get("/hello").status_code for _ in range(3)] == [200, 200, 429]
    after = rate_calls(server)
    assert after["rate.limit"] > before["rate.limit"]


def test_slowapi(server: Server) -> None:
    from slowapi import Limiter, _rate_limit_exceeded_handler
    from slowapi.errors import RateLimitExceeded
    from slowapi.util import get_remote_address
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    server.client().flushall()
    before = rate_calls(server)
    limiter = Limiter(
        key_func=get_remote_address,
        storage_uri=f"recipes://127.0.0.1:{server.port}",
        strategy="moving-window",
    )

    @limiter.limit("2/minute")
    async def hello(request: Request) -> PlainTextResponse:
        return PlainTextResponse("hello")

    app = Starlette(routes=[Route("/hello", hello)])
    app.state.limiter = limiter
    app.add_exception_handler(RateLimitExceeded, _rate_limit_exceeded_handler)
    client = TestClient(app)
    assert [client.get("/hello").status_code for _ in range(3)] == [200, 200, 429]
    after = rate_calls(server)
    assert after["rate.limit"] > before["rate.limit"]
