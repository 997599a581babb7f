"""The short version of the long decoder fuzzing (tests/soak/fuzz.py): every source, a few thousand inputs."""

from __future__ import annotations

from tests.soak.fuzz import fuzz, recorded_payloads


def test_recordings_feed_the_fuzzer() -> None:
    assert len(recorded_payloads()) > 100


def test_short_fuzz_run() -> None:
    run = fuzz(3000, mutants=4)
    assert run.inputs >= 3000
    # Both decoded messages and typed refusals occur: the generated inputs are not all garbage.
    assert run.outcomes["ProtocolError"] > 0 and sum(run.outcomes.values()) == run.inputs
    decoded = {k for k in run.outcomes if "Error" not in k and "Unsupported" not in k}
    assert decoded, run.outcomes
