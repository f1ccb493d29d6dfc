"""An audit without --store: the run's folder holds no comparison and no dispositions.

Kept apart from `record` so that a plain audit loads no database library.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from . import carried
from . import compare as cmp


class NoStore:
    def judge_order(self, result, progress=None) -> None:
        """Without a store, shoes are compared within the log and its context only."""

    def prepare(self, summary: dict[str, Any], findings: pl.DataFrame, out: Path,
                recorded_as: Path | None = None) -> None:
        cmp.forget(out)
        carried.forget(out)

    def land(self, before_commit: Callable[[], None] = lambda: None) -> None:
        before_commit()
