"""Every error and warning the package raises on purpose is one family under GyaMemoryError."""

import importlib

import pytest

from gya_memory.base.errors import FAMILY, GyaMemoryError


@pytest.mark.parametrize("where", FAMILY)
def test_every_error_has_the_common_root(where):
    module, name = where.rsplit(".", 1)
    cls = getattr(importlib.import_module(f"gya_memory.{module}"), name)
    assert issubclass(cls, GyaMemoryError)


def test_the_old_bases_are_kept():
    from gya_memory.base.files import MemoryLocked
    from gya_memory.answer.llm.interface import LLMUnavailable
    from gya_memory.semantic.values import DegradedWarning
    from gya_memory.working import BudgetError

    assert issubclass(BudgetError, ValueError)
    assert issubclass(MemoryLocked, TimeoutError)
    assert issubclass(LLMUnavailable, RuntimeError)
    assert issubclass(DegradedWarning, RuntimeWarning)
