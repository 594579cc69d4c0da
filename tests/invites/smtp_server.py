"""A mail server for tests: a real SMTP conversation on 127.0.0.1 (a thread of this process) that
answers each recipient with the code it is given, so that the invitation task meets a server that
refuses an address for good (550) or for now (451), as a real one would."""

import socketserver
import threading


class _Handler(socketserver.StreamRequestHandler):
    def reply(self, line: str) -> None:
        self.wfile.write(f"{line}\r\n".encode())

    def handle(self) -> None:
        self.reply("220 test SMTP")
        while line := self.rfile.readline():
            command = line.decode().strip().upper()
            if command.startswith(("EHLO", "HELO")):
                self.reply("250 test")
            elif command.startswith("RCPT"):
                self.reply(self.server.rcpt_reply)
            elif command == "DATA":
                self.reply("354 go on")
                while self.rfile.readline() not in (b".\r\n", b""):
                    pass
                self.reply("250 queued")
            elif command == "QUIT":
                self.reply("221 bye")
                return
            else:  # MAIL, RSET, NOOP
                self.reply("250 ok")


class SmtpServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, rcpt_reply: str) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.rcpt_reply = rcpt_reply
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
