"""How many BLAS threads the library's own dense work runs on: the rule, in one place.

A fit of the Kernel Projection Machine does two kinds of dense linear algebra:

* large products and decompositions -- the kernel matrix, its eigendecomposition, the
  products ``K V`` of the Rayleigh-Ritz fold bases -- which gain from threads and keep the
  user's BLAS threads (whatever OpenBLAS / MKL / ``threadpoolctl`` set);
* thousands of small ones -- the Newton steps of the squared-hinge SVM in ``S_D`` (Gram
  matrices of at most ``D + 1`` columns, their Cholesky factors and triangular solves), the
  margins and decision values of the C and D stages, the simplex of the hinge LP -- which
  run on **one** BLAS thread (:func:`small_blas`, :func:`one_blas_thread`).

Why: a threaded BLAS splits every call among its threads, which spin-wait for each other; on
a call of a few microseconds to a few milliseconds the split costs more than it saves, and on a
machine whose cores are busy (other jobs, ``GridSearchCV(n_jobs=...)``, a background load)
the waiting threads wait for cores the machine does not have. Measured on a 2-core Skylake
(OpenBLAS 0.3.31, ``docs/development.rst``, section "BLAS threads"): the default KPM's fit of
the digits took 213-346 s with OpenBLAS's two threads on the busy machine against 3.9 s with
one, and even idle 2.6 s against 1.3 s. scikit-learn does the same around the Lloyd iterations
of :class:`sklearn.cluster.KMeans` (``threadpool_limits(limits=1, user_api="blas")``).

The limit is process-wide (BLAS has one thread count per library) and reference-counted:
nested or concurrent regions (``joblib``'s threading backend runs folds in threads of one
process) set one thread when the first enters and restore the user's count when the last
leaves, so that a region ending in one thread does not give another, still running, the
user's threads back, nor leave the process at one thread. ``threadpoolctl``'s
:class:`~threadpoolctl.ThreadpoolController` is made once (it scans the loaded libraries);
entering and leaving a region costs up to half a millisecond (measured), so the regions are whole stages
and loops, never single calls.
"""

from __future__ import annotations

import contextlib
import threading

from threadpoolctl import ThreadpoolController

__all__ = ["SMALL_BLAS_SIZE", "blas_threads_for", "small_blas", "one_blas_thread"]

#: Dense work whose square systems (the ``(D + 1) x (D + 1)`` Gram matrices of the SVM's
#: Newton steps, the simplex's basis) have fewer rows than this runs on one BLAS thread; from
#: there on, the user's threads. Measured on the 2-core machine (docs/development.rst, "BLAS
#: threads"): a Cholesky factor and solve of order s on two threads against one, interleaved,
#: under the other jobs' load, was slower at every order measured, 64 to 4096 (median 1.5-300x,
#: best run 0.85x at s <= 256 and 1.9-3.7x from s = 512 on); a square GEMM gained from two
#: threads from s ~ 1024 (median) -- but the library's products of that size are those with the
#: kernel matrix, which never run under this rule.
SMALL_BLAS_SIZE = 4096

_LOCK = threading.Lock()
_STATE = {"controller": None, "depth": 0, "limiter": None}


def blas_threads_for(size):
    """The BLAS threads of dense work on matrices of at most ``size`` rows and columns: 1
    below :data:`SMALL_BLAS_SIZE`, None (the user's threads) from there on."""
    return 1 if size < SMALL_BLAS_SIZE else None


def _controller():
    if _STATE["controller"] is None:
        _STATE["controller"] = ThreadpoolController()
    return _STATE["controller"]


@contextlib.contextmanager
def one_blas_thread():
    """Run the block on one BLAS thread, then give the user's threads back (reference-counted:
    the outermost of nested or concurrent regions restores them)."""
    with _LOCK:
        if _STATE["depth"] == 0:
            _STATE["limiter"] = _controller().limit(limits=1, user_api="blas")
        _STATE["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _STATE["depth"] -= 1
            if _STATE["depth"] == 0:
                limiter, _STATE["limiter"] = _STATE["limiter"], None
                limiter.restore_original_limits()


def small_blas(size=0):
    """A context for dense work on matrices of at most ``size`` rows and columns (0: small by
    construction): :func:`one_blas_thread` where :func:`blas_threads_for` says 1, else the
    user's threads."""
    return one_blas_thread() if blas_threads_for(size) == 1 else contextlib.nullcontext()
