"""The auditor's layers, top to bottom: each module imports only modules of its own layer
or of the layers below it, and no two modules import each other, directly or round a
longer loop (tests/test_layers.py checks both, over every import, a function's own
included).

A name covers its module and, for a package, every module in it; the most specific
name decides (ingest/vocabulary and ingest/cards are in the base, the rest of ingest in
the input). The package `auditor` itself (its version) is in the base.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Layer:
    name: str
    what: str
    modules: tuple[str, ...]


LAYERS: tuple[Layer, ...] = (
    Layer("command line", "the `auditor` command: parses the options, runs the rest",
          ("auditor.cli",)),
    Layer("orchestration and outputs",
          "an audit run in parts and its totals; its output folder, put in place whole; "
          "the report, the store, the review app; "
          "simulated logs; the manual's generated pages",
          ("auditor.audit", "auditor.audit_part", "auditor.summary", "auditor.details",
           "auditor.report", "auditor.store", "auditor.review", "auditor.paragraphs",
           "auditor.coverage", "auditor.dealers", "auditor.eras", "auditor.findings",
           "auditor.simulate", "auditor.docs_pages", "auditor.run_folder")),
    Layer("rules", "each rule's id, title and docs, and the checks of the game rules",
          ("auditor.rules",)),
    Layer("game replays",
          "each game's rounds replayed into the frames the rules share, and the context "
          "(the rows of one game, the house rules in force) they are built from",
          ("auditor.games", "auditor.audit_context")),
    Layer("input",
          "reading logs and exports (through a profile) into rows, within the memory "
          "budget; what an audit reports on (scope); the house rules, the regulation",
          ("auditor.ingest", "auditor.profiles", "auditor.scope", "auditor.house",
           "auditor.rulesets", "auditor.paths", "auditor.budget")),
    Layer("base",
          "the format's vocabulary (event names, columns), a card's value and how it is "
          "printed, small operations on polars series, the version and this map",
          ("auditor.ingest.vocabulary", "auditor.ingest.cards", "auditor.series", "auditor",
           "auditor.layers")),
)

PACKAGE = "auditor"


def layer_of(module: str) -> int | None:
    """The index in LAYERS (0: the top) of `module` (a dotted name), None where no name
    covers it."""
    best, found = -1, None
    for index, layer in enumerate(LAYERS):
        for name in layer.modules:
            covers = module == name or (name != PACKAGE and module.startswith(name + "."))
            if covers and len(name) > best:
                best, found = len(name), index
    return found
