"""Generated functions of one source text share a code object, each with its own scope (pgcdc/codegen.py)."""

from __future__ import annotations

from pgcdc import codegen
from pgcdc.codegen import define

SOURCE = "def f(x):\n    return (x, k)\n"


def test_one_code_object_per_text_each_function_its_own_scope() -> None:
    first = define(SOURCE, "<pgcdc test>", {"k": 1}, "f")
    second = define(SOURCE, "<pgcdc test>", {"k": "two"}, "f")
    assert first.__code__ is second.__code__
    assert (first(0), second(0)) == ((0, 1), (0, "two"))
    assert first.__code__.co_filename == "<pgcdc test>"


def test_another_text_or_name_is_compiled_apart() -> None:
    base = define(SOURCE, "<pgcdc test>", {"k": 1}, "f")
    other = define(SOURCE.replace("k)", "k, k)"), "<pgcdc test>", {"k": 1}, "f")
    elsewhere = define(SOURCE, "<pgcdc other>", {"k": 1}, "f")
    assert other.__code__ is not base.__code__ and other(2) == (2, 1, 1)
    assert elsewhere.__code__ is not base.__code__ and elsewhere.__code__.co_filename == "<pgcdc other>"


def test_the_kept_code_is_bounded() -> None:
    for i in range(1100):
        define(f"def f():\n    return {i}\n", "<pgcdc bound>", {}, "f")
    assert len(codegen._CODE) <= 1024
    assert define("def f():\n    return 1099\n", "<pgcdc bound>", {}, "f")() == 1099
