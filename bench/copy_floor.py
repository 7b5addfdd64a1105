"""What moving bytes from one TCP connection to another costs this machine, before any Kafka work.

The batch path's CPU per GB (``bench.mirror_throughput``) has a floor that no Kafka code sets: every byte
the mirror copies is received from one socket and sent to another. This bench measures that floor on
loopback, in one process that only relays (a sender and a sink process on either side, not counted):

- (u) user space: ``recv_into`` one reused buffer, CRC-32C over what arrived (what a batch copy must
  compute when it rewrites producer fields), ``sendall`` of it - what any copy through Python pays;
- (s) ``os.splice`` socket -> pipe -> socket: the bytes never enter the process (Linux only).

Printed: CPU-seconds per GB of the relaying process for each, user and system apart, and the rate.
``python -m bench.copy_floor [--gb 1] [--rounds 2]``
"""

from __future__ import annotations

import argparse
import fcntl
import multiprocessing
import os
import resource
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

from crc32c import crc32c

CHUNK = 1024 * 1024
_F_SETPIPE_SZ = 1031  # fcntl: a pipe of CHUNK bytes, so one splice moves up to a chunk


@dataclass(frozen=True)
class Relay:
    """One relay run: bytes moved, wall seconds, the relaying process's user and system CPU seconds."""

    moved: int
    wall_s: float
    user_s: float
    sys_s: float

    def line(self, label: str) -> str:
        gb = self.moved / 1e9
        cpu = (self.user_s + self.sys_s) / gb
        return (
            f"{label:<28}: {cpu:5.2f} CPU-s per GB (user {self.user_s / gb:.2f}, sys {self.sys_s / gb:.2f})"
            f"  {self.moved / self.wall_s / 1e6:8.1f} MB/s"
        )


def _send(port: int, total: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as s:
        chunk = b"\x5a" * CHUNK
        for _ in range(total // CHUNK):
            s.sendall(chunk)


def _sink(listener: socket.socket) -> None:
    conn, _ = listener.accept()
    buf = bytearray(CHUNK)
    with conn:
        while conn.recv_into(buf):
            pass


def _user_space(inbound: socket.socket, outbound: socket.socket) -> int:
    buf = bytearray(4 * CHUNK)
    view = memoryview(buf)
    moved = 0
    while n := inbound.recv_into(buf):
        piece = view[:n]
        crc32c(piece)
        outbound.sendall(piece)
        moved += n
    return moved


def _spliced(inbound: socket.socket, outbound: socket.socket) -> int:
    read_end, write_end = os.pipe()
    try:
        fcntl.fcntl(write_end, _F_SETPIPE_SZ, CHUNK)
        moved = 0
        while n := os.splice(inbound.fileno(), write_end, CHUNK):
            out = 0
            while out < n:
                out += os.splice(read_end, outbound.fileno(), n - out)
            moved += n
        return moved
    finally:
        os.close(read_end)
        os.close(write_end)


def relay(total: int, how: Callable[[socket.socket, socket.socket], int]) -> Relay:
    """Relay ``total`` bytes from a sender process to a sink process through this process, by ``how``."""
    ctx = multiprocessing.get_context("fork")
    with socket.create_server(("127.0.0.1", 0)) as front, socket.create_server(("127.0.0.1", 0)) as back:
        sender = ctx.Process(target=_send, args=(front.getsockname()[1], total))
        sink = ctx.Process(target=_sink, args=(back,))
        sink.start()
        sender.start()
        inbound, _ = front.accept()
        outbound = socket.create_connection(back.getsockname())
        before, started = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
        with inbound, outbound:
            moved = how(inbound, outbound)
        after, wall = resource.getrusage(resource.RUSAGE_SELF), time.monotonic() - started
        sender.join()
        sink.join()
    return Relay(moved, wall, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gb", type=float, default=1.0, help="bytes relayed per run, in GB (default 1)")
    p.add_argument("--rounds", type=int, default=2, help="runs of each; the cheapest is printed (default 2)")
    args = p.parse_args()
    total = max(1, int(args.gb * 1e9) // CHUNK) * CHUNK
    print(f"== relaying {total / 1e9:.2f} GB over loopback, {args.rounds} round(s), load {os.getloadavg()[0]:.1f}")
    for label, how in (("(u) recv + CRC-32C + send", _user_space), ("(s) splice", _spliced)):
        runs = [relay(total, how) for _ in range(args.rounds)]
        print(min(runs, key=lambda r: r.user_s + r.sys_s).line(label))


if __name__ == "__main__":
    main()
