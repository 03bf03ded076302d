"""`Condition`: a trouble that occurs thousands of times is a few log lines, and its end is one more."""

from structlog.testing import capture_logs

from lancelot_server.http.conditions import Condition


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def lines(logs):
    return [(line["event"], line.get("times")) for line in logs]


def test_a_flood_is_one_line_then_one_a_minute_with_the_count_then_one_when_it_ends():
    clock = Clock()
    condition = Condition("accept_failing", "error", every=60, quiet=1, clock=clock)
    with capture_logs() as logs:
        for _ in range(10_000):
            condition.occurred(error="EMFILE")
        clock.now += 61
        condition.occurred(error="EMFILE")
        condition.passed()  # too soon: it occurred a moment ago
        clock.now += 2
        condition.passed()
        condition.passed()
    assert lines(logs) == [("accept_failing", 1), ("accept_failing", 10_000), ("accept_failing_ended", 10_001)]
    assert logs[0]["log_level"] == "error" and logs[0]["error"] == "EMFILE"
    assert logs[-1]["log_level"] == "info" and logs[-1]["seconds"] == 61


def test_coming_and_going_quickly_stays_within_two_lines_a_minute():
    clock = Clock()
    condition = Condition("connection_cap_reached", every=60, quiet=1, clock=clock)
    with capture_logs() as logs:
        for _ in range(25):  # 25 short episodes, 2 s apart: 50 s
            condition.occurred()
            clock.now += 1.5
            condition.passed()
            clock.now += 0.5
    assert lines(logs) == [("connection_cap_reached", 1), ("connection_cap_reached_ended", 1)]
    with capture_logs() as logs:
        clock.now += 60
        condition.occurred()
    assert lines(logs) == [("connection_cap_reached", 25)]  # the silent episodes' count comes with the next line


def test_nothing_is_logged_while_nothing_occurs():
    condition = Condition("request_timeout")
    with capture_logs() as logs:
        condition.passed()
    assert logs == []
