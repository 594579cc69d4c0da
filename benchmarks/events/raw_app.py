"""The reference row: a bare ASGI long-poll app, served exactly like Parley (gunicorn, one uvicorn
worker). It does nothing but park GET /poll requests and answer them when woken.

    GET  /poll?id=N   park until woken (or 300 s), then answer {"events": [{"id": ...}]}
    POST /wake        wake every parked poll;  POST /wake?id=N  wake poll N only
    GET  /stats       {"parked": count}
    GET  /cheap       {"ok": true} at once
"""

import asyncio
import json
from urllib.parse import parse_qs

waiters: dict[str, asyncio.Future] = {}
counter = 0


async def app(scope, receive, send) -> None:
    global counter
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return
    query = parse_qs(scope["query_string"].decode())
    poll_id = query.get("id", [None])[0]
    if scope["path"] == "/poll":
        future = asyncio.get_running_loop().create_future()
        waiters[poll_id] = future
        try:
            counter += 1
            event_id = await asyncio.wait_for(future, timeout=300)
        except TimeoutError:
            event_id = -1
        finally:
            waiters.pop(poll_id, None)
        body = {"events": [{"id": event_id, "type": "wake"}]}
    elif scope["path"] == "/wake":
        targets = [waiters[poll_id]] if poll_id in waiters else list(waiters.values()) if poll_id is None else []
        for future in targets:
            if not future.done():
                future.set_result(counter)
        body = {"woken": len(targets)}
    elif scope["path"] == "/stats":
        body = {"parked": len(waiters)}
    else:
        body = {"ok": True}
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": payload})
