"""A TCP proxy on 127.0.0.1 in front of a server: another address for the same database, and a network
partition on demand.

- `pause()`: every byte is held where it is, in both directions, and new connections are accepted but
  not forwarded: what a partition that drops packets looks like to a client (nothing fails, everything
  waits). `resume()` lets everything through again; the connections survive, as TCP's would.
- `stop()`: the listening socket and every connection are closed (refused, reset).

Used by the durability tests and by `benchmarks/bench_faults.py`.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class Proxy:
    """Forwards `127.0.0.1:<port>` to `127.0.0.1:<upstream>` (see the module docstring)."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._open = threading.Event()
        self._open.set()
        self._closed = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def dsn(self, dsn: str) -> str:
        """`dsn` (a `postgresql://...@127.0.0.1:<upstream>/...` URI) through this proxy."""
        return dsn.replace(f"127.0.0.1:{self.upstream}", f"127.0.0.1:{self.port}")

    def pause(self) -> None:
        self._open.clear()

    def resume(self) -> None:
        self._open.set()

    def stop(self) -> None:
        self._closed = True
        self._open.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    sock.close()

    def _keep(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self._keep(client)
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        self._open.wait()  # a partition: the connection is accepted, nothing answers
        if self._closed:
            client.close()
            return
        try:
            server = socket.create_connection(("127.0.0.1", self.upstream))
        except OSError:
            with contextlib.suppress(OSError):
                client.close()
            return
        if self._closed:
            server.close()
            return
        self._keep(server)
        threading.Thread(target=self._pump, args=(client, server), daemon=True).start()
        threading.Thread(target=self._pump, args=(server, client), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                self._open.wait()  # held while paused
                if self._closed:
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:  # one side ended: end the other (its pump then ends too) and let both go
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    sock.close()
