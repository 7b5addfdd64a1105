"""The clockwork both periodic source lookups share (mirror.connectors.periodic_request): pure, clock injected."""

from __future__ import annotations

from mirror.connectors.periodic_request import PeriodicRequest


class Request:
    """A request in flight: answered when the test says so."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.answered = False


class Sender:
    """Starts numbered requests (or none, while told there is nothing to ask)."""

    def __init__(self) -> None:
        self.sent: list[Request] = []
        self.nothing_to_ask = False

    def __call__(self) -> Request | None:
        if self.nothing_to_ask:
            return None
        request = Request(len(self.sent) + 1)
        self.sent.append(request)
        return request


def periodic(interval_s: float) -> tuple[PeriodicRequest[Request], Sender, list[float]]:
    now = [100.0]
    return PeriodicRequest(lambda r: r.answered, interval_s, lambda: now[0]), Sender(), now


def test_the_first_request_waits_one_interval_and_an_answer_is_handed_out_once() -> None:
    requests, send, now = periodic(5.0)
    assert requests.poll(send) is None and send.sent == []  # not due at construction
    now[0] = 104.9
    assert requests.poll(send) is None and send.sent == []
    now[0] = 105.0
    assert requests.poll(send) is None and [r.number for r in send.sent] == [1]  # started, not waited for
    assert requests.poll(send) is None  # in flight: nothing handed out, nothing new started
    send.sent[0].answered = True
    answered = requests.poll(send)
    assert answered is send.sent[0]
    assert requests.poll(send) is None and len(send.sent) == 1  # the next one is due at 110


def test_one_request_at_a_time_however_late_its_answer() -> None:
    requests, send, now = periodic(5.0)
    now[0] = 105.0
    requests.poll(send)
    now[0] = 200.0  # many intervals later, still unanswered
    assert requests.poll(send) is None and len(send.sent) == 1
    send.sent[0].answered = True
    assert requests.poll(send) is send.sent[0]  # the answer's call starts nothing
    assert len(send.sent) == 1
    assert requests.poll(send) is None and len(send.sent) == 2  # overdue since 110: at the next call


def test_request_now_starts_at_the_next_poll_but_never_beside_one_in_flight() -> None:
    requests, send, now = periodic(60.0)
    requests.request_now()
    assert requests.poll(send) is None and len(send.sent) == 1
    requests.request_now()
    assert requests.poll(send) is None and len(send.sent) == 1  # the first is still in flight
    send.sent[0].answered = True
    assert requests.poll(send) is send.sent[0]
    assert requests.poll(send) is None and len(send.sent) == 2  # asked for again meanwhile: due at once
    send.sent[1].answered = True
    assert requests.poll(send) is send.sent[1]
    assert requests.poll(send) is None and len(send.sent) == 2  # now due a whole interval after its start
    now[0] = 160.0
    assert requests.poll(send) is None and len(send.sent) == 3


def test_nothing_to_ask_waits_a_whole_interval_and_zero_interval_asks_at_every_idle_poll() -> None:
    requests, send, now = periodic(5.0)
    send.nothing_to_ask = True
    now[0] = 105.0
    assert requests.poll(send) is None and send.sent == []
    send.nothing_to_ask = False
    now[0] = 109.9
    assert requests.poll(send) is None and send.sent == []  # not before 110
    now[0] = 110.0
    requests.poll(send)
    assert len(send.sent) == 1

    eager, send, _now = periodic(0.0)
    eager.poll(send)
    send.sent[0].answered = True
    assert eager.poll(send) is send.sent[0]
    eager.poll(send)
    assert len(send.sent) == 2


def test_a_forgotten_request_is_never_handed_out() -> None:
    requests, send, now = periodic(5.0)
    now[0] = 105.0
    requests.poll(send)
    send.sent[0].answered = True
    requests.forget()
    assert requests.poll(send) is None  # not its answer: a new request would start only when due (110)
    assert len(send.sent) == 1
