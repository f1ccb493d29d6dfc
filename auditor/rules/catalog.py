"""Every rule the auditor knows, registered by importing its module."""

from . import input_quality  # noqa: F401 - registers the input and house-rules rules
from .registry import REGISTRY

__all__ = ["REGISTRY"]
