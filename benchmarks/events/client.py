"""A small asyncio HTTP/1.1 client for holding thousands of long-polls at once (keep-alive sockets)."""

import asyncio
import json
import time


class HttpConnection:
    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def request(
        self, method: str, path: str, headers: dict[str, str] | None = None, body: bytes = b""
    ) -> tuple[int, dict]:
        if self.writer is None:
            await self.open()
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        if body or method in ("POST", "PATCH", "PUT", "DELETE"):
            lines += ["Content-Type: application/x-www-form-urlencoded", f"Content-Length: {len(body)}"]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        await self.writer.drain()
        return await self._response()

    async def _response(self) -> tuple[int, dict]:
        head = await self.reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head.decode("latin1").split("\r\n")
        status = int(status_line.split()[1])
        headers = {}
        for line in header_lines:
            if ":" in line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            payload = await self.reader.readexactly(int(headers["content-length"]))
        elif headers.get("transfer-encoding") == "chunked":
            payload = b""
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                payload += chunk[:-2]
        else:
            payload = b""
        return status, json.loads(payload) if payload else {}

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


class Poller:
    """One client: polls a path again and again, recording when each event arrives."""

    def __init__(self, host: str, port: int, path_for, headers: dict[str, str]) -> None:
        self.connection = HttpConnection(host, port)
        self.path_for = path_for  # last_event_id -> request path
        self.headers = headers
        self.last_event_id = -1
        self.received: list[tuple[float, dict]] = []  # (monotonic time, event)
        self.errors = 0
        self.got_event = asyncio.Event()

    async def run(self) -> None:
        while True:
            try:
                status, body = await self.connection.request("GET", self.path_for(self.last_event_id), self.headers)
            except (OSError, asyncio.IncompleteReadError, ValueError):
                self.errors += 1
                self.connection.close()
                await asyncio.sleep(0.5)
                continue
            now = time.monotonic()
            if status != 200:
                self.errors += 1
                await asyncio.sleep(0.5)
                continue
            for event in body.get("events", []):
                self.received.append((now, event))
                self.last_event_id = max(self.last_event_id, event["id"])
            self.got_event.set()


async def open_in_batches(pollers: list[Poller], batch: int = 250) -> list[asyncio.Task]:
    """Connect and start polling, a batch at a time (the listen backlog is finite)."""
    tasks = []
    for start in range(0, len(pollers), batch):
        group = pollers[start : start + batch]
        await asyncio.gather(*(p.connection.open() for p in group))
        tasks += [asyncio.create_task(p.run()) for p in group]
        await asyncio.sleep(0.02)
    return tasks
