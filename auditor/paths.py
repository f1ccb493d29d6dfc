"""Where the shipped data lives: the repository's folders, or a wheel's copy of them."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """`rulesets` or `report_templates`: beside the package in a checkout, inside it in a wheel."""
    checkout = _PACKAGE.parent / name
    return checkout if checkout.is_dir() else _PACKAGE / "_data" / name
