"""Long broker outage: `python -m tests.soak.outage --seconds 60` (inside the project's virtualenv).

Runs tests/soak/broker_outage.py with the broker down for --seconds (PGCDC_SOAK_OUTAGE_S) and prints its
summary line: statements and records written, lost (the test fails unless 0), duplicates, connector restarts,
time to catch up after the broker came back, and the slot's position during the outage against the last stored
offset. s3rver must be installed: `./dev test tests/soak/broker_outage.py` fetches it, or the same run in
one command: `PGCDC_SOAK_OUTAGE_S=60 ./dev test tests/soak/broker_outage.py -s`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pytest

TEST = Path(__file__).resolve().parent / "broker_outage.py"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.soak.outage", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the broker stays down (default 60)")
    args = parser.parse_args(argv)
    os.environ["PGCDC_SOAK_OUTAGE_S"] = f"{args.seconds:g}"
    return int(pytest.main([str(TEST), "-s", "-q", "-p", "no:cacheprovider"]))


if __name__ == "__main__":
    sys.exit(main())
