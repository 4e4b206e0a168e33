"""Parameters, declared: each estimator states what every parameter may be.

An estimator lists its parameters' constraints in a class attribute::

    _parameter_constraints = {
        "n_components": [Integer(1), Real(0, 1, "neither"), None],
        "eigen_solver": [Options("auto", "dense", "arpack")],
    }

and :func:`validate_params` checks them at ``fit`` (scikit-learn's convention: parameters
are checked when used, not when set). A value passes when one constraint of its list
accepts it; otherwise the :class:`ValueError` names the parameter, every accepted form and
the value given. ``None`` in a list accepts ``None``; a constraint object accepts what its
:meth:`Constraint.accepts` says. The imperative checks (:func:`check_int`,
:func:`check_real`, ...) are the same constraints applied to one value, for functions.

Booleans are never integers or reals here (``True`` is not a dimension), and numpy scalars
are accepted wherever their Python type is.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "Constraint",
    "Integer",
    "Real",
    "Options",
    "Boolean",
    "InstanceOf",
    "Callable",
    "PositiveGrid",
    "IntegerGrid",
    "Splitter",
    "RandomState",
    "ClassWeights",
    "check_param",
    "validate_params",
    "check_int",
    "check_real",
    "check_option",
    "check_bool",
    "check_positive_grid",
    "check_generator",
    "check_random_state",
]


class Constraint:
    """One accepted form of a parameter: :meth:`accepts` a value, :meth:`describe` the form,
    :meth:`convert` an accepted value to its canonical type (default: unchanged), and
    :meth:`reject_reason`, a precise message when the value has the form's type but not
    its range (None otherwise)."""

    def accepts(self, value) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def convert(self, value):
        return value

    def reject_reason(self, value, name):
        return None


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _bound_text(low, high, low_open, high_open, fmt):
    if low is not None and high is not None:
        return f"in {'(' if low_open else '['}{fmt(low)}, {fmt(high)}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {fmt(low)}"
    if high is not None:
        return f"{'<' if high_open else '<='} {fmt(high)}"
    return ""


class Integer(Constraint):
    """An integer in ``[low, high]`` (either end may be None)."""

    def __init__(self, low=None, high=None):
        self.low, self.high = low, high

    def _in_range(self, value):
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)

    def accepts(self, value):
        return _is_int(value) and self._in_range(value)

    def describe(self):
        bound = _bound_text(self.low, self.high, False, False, str)
        return f"an integer {bound}".rstrip()

    def convert(self, value):
        return int(value)

    def reject_reason(self, value, name):
        if not _is_int(value):
            return None
        if self.low is not None and value < self.low:
            return f"{name} must be >= {self.low}, got {int(value)}"
        return f"{name} must be <= {self.high}, got {int(value)}"


class Real(Constraint):
    """A finite real number in an interval; ``closed`` is 'both', 'left', 'right' or 'neither'."""

    def __init__(self, low=None, high=None, closed="both"):
        self.low, self.high = low, high
        self.low_open = closed in ("right", "neither")
        self.high_open = closed in ("left", "neither")

    def _in_range(self, value):
        lo_ok = self.low is None or (value > self.low if self.low_open else value >= self.low)
        hi_ok = self.high is None or (value < self.high if self.high_open else value <= self.high)
        return lo_ok and hi_ok

    def accepts(self, value):
        return _is_real(value) and bool(np.isfinite(value)) and self._in_range(value)

    def describe(self):
        bound = _bound_text(self.low, self.high, self.low_open, self.high_open, lambda v: f"{v:g}")
        return f"a real number {bound}".rstrip()

    def convert(self, value):
        return float(value)

    def reject_reason(self, value, name):
        if not _is_real(value):
            return None
        if not np.isfinite(value):
            return f"{name} must be finite, got {value!r}"
        if self.low is not None and not (value > self.low if self.low_open else value >= self.low):
            return f"{name} must be {'>' if self.low_open else '>='} {self.low:g}, got {value!r}"
        return f"{name} must be {'<' if self.high_open else '<='} {self.high:g}, got {value!r}"


class Options(Constraint):
    """One of a fixed set of strings."""

    def __init__(self, *options):
        self.options = tuple(options)

    def accepts(self, value):
        return isinstance(value, str) and value in self.options

    def describe(self):
        return f"one of {self.options}" if len(self.options) > 1 else repr(self.options[0])


class Boolean(Constraint):
    """``True`` or ``False`` (a numpy bool too; integers and strings are not flags)."""

    def accepts(self, value):
        return isinstance(value, (bool, np.bool_))

    def describe(self):
        return "True or False"

    def convert(self, value):
        return bool(value)


class InstanceOf(Constraint):
    """An instance of a type, described by ``what`` (default: the type's name)."""

    def __init__(self, cls, what=None):
        self.cls, self.what = cls, what

    def accepts(self, value):
        return isinstance(value, self.cls)

    def describe(self):
        return self.what or f"a {self.cls.__name__}"


class Callable(Constraint):
    """A callable."""

    def accepts(self, value):
        return callable(value)

    def describe(self):
        return "a callable"


class PositiveGrid(Constraint):
    """A positive finite number or a non-empty 1-D sequence of them; converted to a sorted
    array of distinct values."""

    def accepts(self, value):
        values = np.atleast_1d(np.asarray(value, dtype=object))
        return values.ndim == 1 and values.size > 0 and all(
            _is_real(v) and np.isfinite(v) and v > 0 for v in values)

    def describe(self):
        return "a positive number or a non-empty list of them"

    def reject_reason(self, value, name):
        values = np.atleast_1d(np.asarray(value, dtype=object))
        if values.ndim != 1 or values.size == 0 or not all(_is_real(v) for v in values):
            return None
        bad = next(v for v in values if not (np.isfinite(v) and v > 0))
        return f"{name} must be > 0 and finite, got {bad!r}"

    def convert(self, value):
        return np.unique(np.asarray(np.atleast_1d(np.asarray(value, dtype=object)), dtype=float))


class IntegerGrid(Constraint):
    """A non-empty 1-D sequence of integers >= ``low``; converted to a sorted array of
    distinct values."""

    def __init__(self, low=1):
        self.low = low

    def accepts(self, value):
        if isinstance(value, str) or not hasattr(value, "__len__"):
            return False
        values = np.asarray(value)
        return (values.ndim == 1 and values.size > 0 and np.issubdtype(values.dtype, np.integer)
                and bool(np.all(values >= self.low)))

    def describe(self):
        return f"a non-empty list of integers >= {self.low}"

    def convert(self, value):
        return np.unique(np.asarray(value, dtype=np.int64))


class Splitter(Constraint):
    """A cross-validation splitter: an object with ``split`` and ``get_n_splits`` (or an
    iterable of ``(train, test)`` index pairs, as scikit-learn's ``check_cv`` takes)."""

    def accepts(self, value):
        if isinstance(value, (str, bytes)) or _is_int(value) or _is_real(value):
            return False
        return (hasattr(value, "split") and hasattr(value, "get_n_splits")) or hasattr(value, "__iter__")

    def describe(self):
        return "a cross-validation splitter"


class RandomState(Constraint):
    """A seed as scikit-learn takes it: None, an int in ``[0, 2**32 - 1]`` or a
    ``numpy.random.RandomState``."""

    def accepts(self, value):
        return value is None or isinstance(value, np.random.RandomState) or (
            _is_int(value) and 0 <= value <= 2**32 - 1)

    def describe(self):
        return "None, an integer in [0, 2**32 - 1] or a numpy RandomState"


class ClassWeights(Constraint):
    """A dict ``{label: weight}`` of finite non-negative weights (``class_weight``; a weight
    multiplies the sample weights of its class, which must not be negative)."""

    def accepts(self, value):
        return isinstance(value, dict) and all(_is_real(w) and np.isfinite(w) and w >= 0 for w in value.values())

    def describe(self):
        return "a dict {label: weight} of finite non-negative weights"

    def reject_reason(self, value, name):
        if not isinstance(value, dict):
            return None
        bad = {k: w for k, w in value.items() if not (_is_real(w) and np.isfinite(w) and w >= 0)}
        return (f"{name} must map each label to a finite non-negative weight (a class's sample "
                f"weights are multiplied by it), got {bad!r}")


def _describe_all(constraints):
    texts = ["None" if c is None else c.describe() for c in constraints]
    return texts[0] if len(texts) == 1 else ", ".join(texts[:-1]) + " or " + texts[-1]


def check_param(value, name, constraints):
    """``value`` in its canonical form if one of ``constraints`` accepts it, else a
    :class:`ValueError` naming ``name``, the accepted forms and the value."""
    for c in constraints:
        if c is None:
            if value is None:
                return None
        elif c.accepts(value):
            return c.convert(value)
    reasons = [c.reject_reason(value, name) for c in constraints if c is not None]
    reasons = [r for r in reasons if r is not None]
    if len(reasons) == 1:
        raise ValueError(reasons[0])
    raise ValueError(f"{name} must be {_describe_all(constraints)}, got {value!r}")


def validate_params(estimator, constraints=None):
    """Check every parameter of ``estimator`` against its ``_parameter_constraints`` (or the
    given ``constraints``); returns ``{name: canonical value}``."""
    constraints = type(estimator)._parameter_constraints if constraints is None else constraints
    return {name: check_param(getattr(estimator, name), name, c) for name, c in constraints.items()}


# ------------------------------------------------------------------ one value at a time
def check_int(value, name, *, minimum=1, maximum=None, allow_none=False):
    """An integer parameter in ``[minimum, maximum]`` (bools and floats are rejected)."""
    return check_param(value, name, [Integer(minimum, maximum)] + ([None] if allow_none else []))


def check_real(value, name, *, low=None, high=None, low_open=False, high_open=False, allow_none=False):
    """A finite real parameter in the interval given by ``low``/``high`` (open ends on request)."""
    closed = {(False, False): "both", (False, True): "left", (True, False): "right", (True, True): "neither"}
    return check_param(value, name, [Real(low, high, closed[(low_open, high_open)])]
                       + ([None] if allow_none else []))


def check_positive_grid(value, name):
    """A positive finite number or a non-empty 1-D sequence of them: a sorted, distinct array."""
    return check_param(value, name, [PositiveGrid()])


def check_option(value, name, options):
    """One of a fixed set of string options."""
    return check_param(value, name, [Options(*options)])


def check_bool(value, name):
    """A boolean flag: ``True``/``False`` or a numpy bool (integers and strings are rejected)."""
    return check_param(value, name, [Boolean()])


def check_generator(random_state, name="random_state"):
    """``numpy.random.default_rng(random_state)``, with a clear error for anything it refuses."""
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be None, a non-negative int, a SeedSequence or a numpy Generator, got "
            f"{random_state!r}"
        ) from None


def check_random_state(random_state, name="random_state"):
    """scikit-learn's ``check_random_state`` (None, an int in ``[0, 2**32 - 1]`` or a
    ``RandomState``), with an error that names the parameter."""
    from sklearn.utils import check_random_state as sk_check_random_state

    value = check_param(random_state, name, [RandomState()])
    return sk_check_random_state(value)
