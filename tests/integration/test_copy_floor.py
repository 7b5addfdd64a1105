"""bench.copy_floor relays every byte both ways and says what it cost."""

from __future__ import annotations

from bench import copy_floor


def test_both_relays_move_every_byte_and_report_their_cpu() -> None:
    total = 8 * copy_floor.CHUNK
    for how in (copy_floor._user_space, copy_floor._spliced):
        run = copy_floor.relay(total, how)
        assert run.moved == total
        assert run.wall_s > 0 and run.user_s + run.sys_s >= 0
        assert "CPU-s per GB" in run.line("x")
