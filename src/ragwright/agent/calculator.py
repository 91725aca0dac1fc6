"""A safe calculator for the agent: arithmetic read with :mod:`ast`, never ``eval``.

Accepted: numbers, ``+ - * / // % **``, unary signs, parentheses, the constants ``pi`` and ``e``, and
the functions ``abs round min max sqrt log log10 exp floor ceil``; ``^`` is a power and ``1,200`` a thousand
separator. Everything else (names, attributes,
calls of anything else, subscripts, comprehensions, strings, lambdas …) is refused before anything is
computed. Bounds keep a hostile expression cheap: at most 200 characters and 64 operations, exponents
at most 1,000 in size, intermediate values at most 1e300 in magnitude.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable
from typing import Any, Final

MAX_CHARS: Final = 200
MAX_NODES: Final = 64
MAX_EXPONENT: Final = 1_000
MAX_MAGNITUDE: Final = 1e300

_BINARY: Final[dict[type, Callable[[Any, Any], Any]]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: Final[dict[type, Callable[[Any], Any]]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: Final[dict[str, Callable[..., Any]]] = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "log": math.log,
    "log10": math.log10,
    "exp": math.exp,
    "floor": math.floor,
    "ceil": math.ceil,
}
_CONSTANTS: Final = {"pi": math.pi, "e": math.e}
_THOUSANDS: Final = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")  # 1,200 → 1200 (write max(3, 900) with a space)


class CalculatorError(ValueError):
    """The expression is not accepted arithmetic, or its value is out of bounds."""


def calculate(expression: str) -> int | float:
    """The value of the arithmetic *expression*; :class:`CalculatorError` when it is refused."""
    if not isinstance(expression, str) or not expression.strip():
        raise CalculatorError("give an arithmetic expression such as (3 + 4) * 2")
    text = _THOUSANDS.sub("", expression.strip().replace("^", "**").replace("×", "*").replace("÷", "/"))
    if len(text) > MAX_CHARS:
        raise CalculatorError(f"the expression is longer than {MAX_CHARS} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise CalculatorError(f"not an arithmetic expression: {expression[:60]!r}") from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise CalculatorError(f"the expression has more than {MAX_NODES} parts")
    value = _eval(tree.body)
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculatorError("the result is not a finite number")
    return value


def _checked(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CalculatorError("only numbers are allowed")
    if abs(value) > MAX_MAGNITUDE:
        raise CalculatorError("the value is too large")
    return value


def _eval(node: ast.AST) -> int | float:
    if isinstance(node, ast.Constant):
        return _checked(node.value)
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise CalculatorError(f"unknown name {node.id!r}")
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _checked(_UNARY[type(node.op)](_eval(node.operand)))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and (abs(right) > MAX_EXPONENT or abs(left) > MAX_MAGNITUDE ** (1 / 4)):
            raise CalculatorError("the power is too large")
        try:
            return _checked(_BINARY[type(node.op)](left, right))
        except ZeroDivisionError:
            raise CalculatorError("division by zero") from None
        except OverflowError:
            raise CalculatorError("the value is too large") from None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        if node.keywords or not node.args or len(node.args) > 8:
            raise CalculatorError(f"{node.func.id}() takes one to eight numbers")
        args = [_eval(a) for a in node.args]
        try:
            return _checked(_FUNCTIONS[node.func.id](*args))
        except (ValueError, TypeError, OverflowError) as exc:
            raise CalculatorError(f"{node.func.id}(): {exc}") from None
    raise CalculatorError(f"{type(node).__name__} is not allowed in an arithmetic expression")
