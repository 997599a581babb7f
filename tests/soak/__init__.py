"""Long runs, not collected by pytest: tests/soak/README.md lists them (kill loop, broker outage, fuzzing)."""
