"""In-memory offsets: for tests and embedding; a restart starts from the slot's position."""

from __future__ import annotations

from pgcdc.offsets import Offset


class MemoryOffsetStore:
    def __init__(self, initial: Offset | None = None) -> None:
        self.offset = dict(initial) if initial else None
        self.history: list[Offset] = []

    def load(self) -> Offset | None:
        return dict(self.offset) if self.offset else None

    def store(self, offset: Offset) -> None:
        self.offset = dict(offset)
        self.history.append(self.offset)

    def reset(self) -> None:
        self.offset = None

    def close(self) -> None:
        pass
