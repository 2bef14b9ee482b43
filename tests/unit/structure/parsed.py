"""Source text parsed once per process: the structure tests each read every module of the package (imports,
sizes, contexts, names), and they run on one worker (``xdist_group("package-sources")``)."""

from __future__ import annotations

import ast
from functools import lru_cache

SOURCES_GROUP = "package-sources"


@lru_cache(maxsize=None)
def parsed(text: str) -> ast.Module:
    """``ast.parse(text)``, shared: callers only read the tree."""
    return ast.parse(text)
