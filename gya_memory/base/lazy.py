"""A package's public names, each imported on first use (PEP 562).

Why (为什么): ``import gya_memory`` must do no work: no files opened, no models loaded, no
numpy or Qdrant imported. A package lists its public names and the module that defines
each; the module is imported only when a name is first used. Each name has one home (the
module that defines it); the package only says where that is.

>>> import sys, types
>>> pkg = types.ModuleType("demo")
>>> sys.modules["demo"] = pkg
>>> pkg.__getattr__, pkg.__dir__ = lazy_names("demo", {"dedent": "textwrap"})
>>> pkg.dedent("  x")
'x'
>>> "dedent" in dir(pkg)
True
>>> del sys.modules["demo"]
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, exports: Mapping[str, str]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``exports`` maps a public name to the
    module (a full dotted path) that defines it."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # the next access is a plain attribute
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
