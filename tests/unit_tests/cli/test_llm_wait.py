import threading
import time

from sealgraph.cli._llm_wait import WaitNotices
from sealgraph.reasoning.llm.waits import LLMWait, listening, waiting


def test_a_call_is_announced_with_its_bound_and_ticks_until_it_ends():
    lines: list[str] = []
    done = threading.Event()

    def write(line: str) -> None:
        lines.append(line)
        if "still waiting" in line:
            done.set()

    notices = WaitNotices(write, tick_s=0.01)
    with listening(notices), waiting("generate", 1, 30.0):
        assert done.wait(5)
    ticks = len(lines)
    time.sleep(0.05)
    assert len(lines) == ticks  # the ticker stopped with the call
    assert lines[0] == (
        "sealgraph: waiting for the LLM (generate, call 1): up to 30 s, "
        "then the offline reasoner answers this step"
    )
    assert lines[1].startswith("sealgraph: still waiting for the LLM (generate): ")
    assert lines[1].endswith(" s left")


def test_without_a_listener_nothing_is_reported():
    heard: list[tuple[LLMWait, bool]] = []
    with waiting("needs", 1, 5.0):
        pass
    with listening(lambda wait, started: heard.append((wait, started))), waiting("needs", 2, 5.0):
        pass
    with waiting("needs", 3, 5.0):
        pass
    assert [(w.call, started) for w, started in heard] == [(2, True), (2, False)]
    assert 0 < heard[0][0].left() <= 5.0
