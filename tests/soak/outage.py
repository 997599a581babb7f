"""Long broker outages: `python -m tests.soak.outage --seconds 60 --times 3` (inside the project's virtualenv).

Runs tests/slow/test_broker_outage.py with the Apache Kafka broker killed --times times and each time kept down
for --seconds (PGCDC_SOAK_OUTAGES, PGCDC_SOAK_OUTAGE_S; the default suite: once, 10 s) and prints its summary
line: statements and change events committed, records written, lost, phantom (rolled back) and out-of-order
events (the test fails unless all 0), duplicates, holes in the partitions' offsets, connector restarts, time to
catch up after each restart, and the load average. The broker's jars must be in the cache (`./dev test` fetches
them), or the same run in one command:
`PGCDC_SOAK_OUTAGE_S=60 PGCDC_SOAK_OUTAGES=3 ./dev test tests/slow/test_broker_outage.py -s`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import pytest

TEST = Path(__file__).resolve().parent.parent / "slow" / "test_broker_outage.py"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.soak.outage", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the broker stays down (default 60)")
    parser.add_argument("--times", type=int, default=3, help="how many outages (default 3)")
    args = parser.parse_args(argv)
    os.environ["PGCDC_SOAK_OUTAGE_S"] = f"{args.seconds:g}"
    os.environ["PGCDC_SOAK_OUTAGES"] = str(args.times)
    return int(pytest.main([str(TEST), "-s", "-q", "-p", "no:cacheprovider"]))


if __name__ == "__main__":
    sys.exit(main())
