"""Global configuration: memory budgets for kernel matrices.

``max_kernel_bytes`` is the largest kernel matrix that :class:`kpm.kernels.Kernel`
will materialise in one call; anything larger raises
:class:`kpm.KernelMemoryError` instead of silently exhausting memory.
``block_bytes`` bounds the temporary arrays of blockwise kernel computations.
"""

from __future__ import annotations

import contextlib
import os

from kpm.validation import check_int

__all__ = ["get_config", "set_config", "config_context"]

_GiB = 1024**3
_MiB = 1024**2


def _from_env(variable, default):
    """A positive integer number of bytes from the environment (the default if unset)."""
    text = os.environ.get(variable)
    if text is None or not text.strip():
        return default
    try:
        value = int(text.strip())
    except ValueError:
        raise ValueError(
            f"the environment variable {variable} must be a positive integer number of bytes, "
            f"got {text!r}"
        ) from None
    return check_int(value, f"the environment variable {variable}", minimum=1)


_CONFIG = {
    "max_kernel_bytes": _from_env("KPM_MAX_KERNEL_BYTES", 4 * _GiB),
    "block_bytes": _from_env("KPM_BLOCK_BYTES", 128 * _MiB),
}


def get_config() -> dict:
    """Return a copy of the current configuration."""
    return dict(_CONFIG)


def set_config(*, max_kernel_bytes: int | None = None, block_bytes: int | None = None) -> None:
    """Set the memory budgets (bytes).

    Parameters
    ----------
    max_kernel_bytes : int, optional
        Largest kernel matrix materialised in one call.
    block_bytes : int, optional
        Size of the temporary blocks used by blockwise kernel computations.

    Any integer type is accepted (``int``, ``numpy.int64``, ...); bools, floats and
    values ``<= 0`` raise ``ValueError``. Nothing is changed unless both are valid.
    """
    new = {}
    for name, value in (("max_kernel_bytes", max_kernel_bytes), ("block_bytes", block_bytes)):
        if value is not None:
            new[name] = check_int(value, f"{name} (a number of bytes)", minimum=1)
    _CONFIG.update(new)


@contextlib.contextmanager
def config_context(**kwargs):
    """Temporarily change the configuration (``with config_context(block_bytes=...)``)."""
    old = get_config()
    set_config(**kwargs)
    try:
        yield
    finally:
        _CONFIG.update(old)
