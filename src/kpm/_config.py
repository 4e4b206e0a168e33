"""Global configuration: memory budgets for kernel matrices.

``max_kernel_bytes`` is the largest kernel matrix that :class:`kpm.kernels.Kernel`
will materialise in one call; anything larger raises
:class:`kpm.kernels.KernelMemoryError` instead of silently exhausting memory.
``block_bytes`` bounds the temporary arrays of blockwise kernel computations.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["get_config", "set_config", "config_context"]

_GiB = 1024**3
_MiB = 1024**2

_CONFIG = {
    "max_kernel_bytes": int(os.environ.get("KPM_MAX_KERNEL_BYTES", 4 * _GiB)),
    "block_bytes": int(os.environ.get("KPM_BLOCK_BYTES", 128 * _MiB)),
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
    """
    for name, value in (("max_kernel_bytes", max_kernel_bytes), ("block_bytes", block_bytes)):
        if value is None:
            continue
        if not isinstance(value, (int,)) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{name} must be a positive integer number of bytes, got {value!r}")
        _CONFIG[name] = int(value)


@contextlib.contextmanager
def config_context(**kwargs):
    """Temporarily change the configuration (``with config_context(block_bytes=...)``)."""
    old = get_config()
    set_config(**kwargs)
    try:
        yield
    finally:
        _CONFIG.update(old)
