"""A loopback TCP proxy in front of the real Neo4j that a test can cut: ``drop()`` resets
every open connection (what a Neo4j crash does to pooled connections), ``refuse()`` also
stops listening (Neo4j is down: connection refused), ``serve()`` listens again."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading


class TcpProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._listener: socket.socket | None = None
        self._conns: list[socket.socket] = []
        self._lock = threading.Lock()
        self.serve()

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def serve(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # refused(): the listener was closed
            upstream = socket.create_connection(self.target)
            with self._lock:
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def drop(self) -> None:
        with self._lock:
            conns, self._conns = self._conns, []
        for s in conns:
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                # shutdown first: close() alone leaves the socket open while a pipe thread
                # is blocked reading it (Neo4j would keep the transaction and its locks)
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)
                s.close()  # linger 0: a reset, as from a killed process
            except OSError:
                pass

    def refuse(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(OSError):  # wakes the blocked accept(); close() alone
                self._listener.shutdown(socket.SHUT_RDWR)  # would leave it listening
            self._listener.close()
            self._listener = None
        self.drop()

    def close(self) -> None:
        self.refuse()
