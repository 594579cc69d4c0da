"""Push services on 127.0.0.1 for the tests, real servers in threads that record what they are sent
and answer as told: a JSON-over-HTTP/1.1 server (the push bouncer, FCM and its token service), and
an HTTP/2 server (APNs; h2c, HTTP/2 without TLS, which the APNs backend speaks to an http:// URL)."""

import json
import socket
import socketserver
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import h2.config
import h2.connection
import h2.events

# respond(path, headers, raw body) -> (status, JSON answer or None)
Responder = Callable[[str, dict[str, str], bytes], tuple[int, Any]]


def serve_http(respond: Responder) -> tuple[str, Callable[[], None]]:
    """An HTTP/1.1 server answering every POST with respond(); (its URL, a function stopping it)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, answer = respond(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            data = json.dumps(answer).encode() if answer is not None else b""
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return f"http://127.0.0.1:{server.server_address[1]}", stop


def serve_http2(respond: Responder) -> tuple[str, Callable[[], None]]:
    """An HTTP/2 (h2c, prior knowledge) server answering every request with respond()."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            sock: socket.socket = self.request
            config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
            conn = h2.connection.H2Connection(config=config)
            conn.initiate_connection()
            sock.sendall(conn.data_to_send())
            streams: dict[int, tuple[dict[str, str], bytearray]] = {}
            while True:
                try:
                    data = sock.recv(65535)
                except OSError:
                    return
                if not data:
                    return
                for event in conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        streams[event.stream_id] = (dict(event.headers), bytearray())
                    elif isinstance(event, h2.events.DataReceived):
                        streams[event.stream_id][1].extend(event.data)
                        conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    elif isinstance(event, h2.events.StreamEnded):
                        headers, body = streams.pop(event.stream_id)
                        status, answer = respond(headers[":path"], headers, bytes(body))
                        reply = [(":status", str(status)), ("apns-id", "00000000-0000-0000-0000-000000000001")]
                        if answer is None:
                            conn.send_headers(event.stream_id, reply, end_stream=True)
                        else:
                            conn.send_headers(event.stream_id, [*reply, ("content-type", "application/json")])
                            conn.send_data(event.stream_id, json.dumps(answer).encode(), end_stream=True)
                    elif isinstance(event, h2.events.ConnectionTerminated):
                        return
                sock.sendall(conn.data_to_send())

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return f"http://127.0.0.1:{server.server_address[1]}", stop
