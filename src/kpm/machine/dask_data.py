"""Training points whose features stay on Dask workers (the ``dask`` extra: ``pip install
'kpm[dask]'``).

The distributed mode of :class:`kpm.NystroemKPM`. The ``n × D`` feature matrix, the
class codes and the cross-validation fold of every point are Dask arrays chunked by
rows and *persisted* on the workers; they never travel to the client. What the
constraint generation (:mod:`kpm.hinge.constraint_generation`) needs of all n points -- the
violation search of each round, the draw of the initial working set -- and what the
KPM's curves need -- the validation errors and clipped risks of a path's solutions --
run as one task per chunk, where the chunk lives. Each search returns the chunk's
hinge sum, its count of violated points and the feature rows of those violated
points that are not yet in the working set; the curve sums return a few numbers per
grid dimension. The client holds the working sets (their rows), the LPs and
``O(chunks)`` numbers.

A lost worker: the persisted chunks are results of a pure, deterministic graph
(features of rows of X), and the client keeps their futures, so the scheduler
recomputes the lost chunks from it and reruns the tasks that needed them; the results
are the same numbers.

Folds. With ``cv`` an int the folds are drawn chunk by chunk: in chunk ``c`` the
points of each class are permuted by a generator seeded with ``(seed, c)`` and dealt
round-robin to the folds from a random first fold, so that each fold is stratified and
the assignment depends only on ``random_state`` and the chunking (the row blocks of
``memory_budget``), never on the cluster. These folds need training points of every class
in every fold: a class with fewer points than folds may lack them, and is then an error
(the in-memory fit keeps such a class in every training part instead).
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np

from kpm.hinge.aggregation import merge_compensated
from kpm.hinge.constraint_generation import ConstraintGenerationPath
from kpm.hinge.rows import InMemoryRows, Violations, top_violations
from kpm.machine.engine import FullPath, curve_sums, one_vs_rest, ovr_targets, predict_codes
from kpm.machine.folds import check_fold

__all__ = [
    "DaskClientError",
    "DaskRows",
    "DaskRowSource",
    "chunk_folds",
    "fold_array",
    "code_array",
    "is_dask_array",
    "check_client",
    "dask_errors",
    "dask_codes",
    "labels_block",
]


class DaskClientError(RuntimeError):
    """The Dask client or cluster failed during ``fit``; no model was fitted."""


def is_dask_array(X) -> bool:
    """Whether X is a :class:`dask.array.Array`. Dask is not imported for the question: an
    object can only be a Dask array where the caller imported Dask already."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def _require_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(
            "fitting on a Dask cluster (client=...) needs dask and distributed, which the 'dask' "
            "extra installs: pip install 'kpm[dask]'"
        ) from exc
    return distributed


def _dask_failure_types():
    import asyncio
    import concurrent.futures

    from distributed import KilledWorker
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError

    return (OSError, TimeoutError, asyncio.TimeoutError, concurrent.futures.CancelledError, CommClosedError,
            KilledWorker, FutureCancelledError)


def check_client(client):
    """``client``: None, or a running ``distributed.Client``."""
    if client is None:
        return None
    distributed = _require_distributed()
    if not isinstance(client, distributed.Client):
        raise ValueError(f"client must be a distributed.Client or None, got {type(client).__name__}")
    if client.status != "running":
        raise DaskClientError(
            f"the Dask client is not connected (status {client.status!r}); no model was fitted"
        )
    return client


@contextlib.contextmanager
def dask_errors(client):
    """Dask failures (a lost scheduler, cancelled futures) as :class:`DaskClientError`."""
    try:
        yield
    except DaskClientError:
        raise
    except Exception as exc:
        if client is not None and isinstance(exc, _dask_failure_types()):
            raise DaskClientError(
                f"the Dask computation failed ({type(exc).__name__}: {exc}); the client or its "
                "cluster disconnected during fit - no model was fitted"
            ) from exc
        if client is not None and client.status != "running":
            raise DaskClientError(
                f"the Dask client disconnected during fit ({type(exc).__name__}: {exc}); "
                "no model was fitted"
            ) from exc
        raise
    if client is not None and client.status != "running":
        raise DaskClientError("the Dask client disconnected during fit; no model was fitted")


def dask_codes(y, chunks):
    """``(classes, codes)``: the sorted classes and a Dask array of class codes with the
    features' row chunks; a Dask y stays on the workers (only its distinct values travel)."""
    import dask.array as da
    from sklearn.utils.multiclass import check_classification_targets

    if is_dask_array(y):
        classes = np.unique(np.asarray(da.unique(y).compute()))
        check_classification_targets(classes)
        codes = code_array(y.rechunk((chunks,)), classes)
    else:
        classes, codes_np, _ = one_vs_rest(y, "NystroemKPM")
        codes = da.from_array(codes_np.astype(np.int64), chunks=(chunks,))
    if len(classes) < 2:
        raise ValueError(f"y has only one class ({classes[0]!r}); NystroemKPM needs samples of at least 2 classes")
    return classes, codes


def labels_block(F, classes):
    """Class labels of a block of decision values (n, n_problems)."""
    return classes[predict_codes(F)]

ALL, TRAIN, VAL = "all", "train", "val"


# --------------------------------------------------------------------------- worker tasks
def chunk_folds(codes, n_folds, seed, chunk):
    """Fold ids (0..n_folds-1) of the points of one chunk (see the module docstring)."""
    rng = np.random.default_rng([int(seed), int(chunk)])
    folds = np.empty(len(codes), dtype=np.int16)
    for c in np.unique(codes):
        idx = np.flatnonzero(codes == c)
        start = rng.integers(n_folds)
        folds[idx[rng.permutation(len(idx))]] = (np.arange(len(idx)) + start) % n_folds
    return folds


def _fold_block(codes, n_folds, seed, block_id=None):
    return chunk_folds(codes, n_folds, seed, block_id[0])


def fold_array(codes, n_folds, seed):
    """The CV fold of every point, chunk by chunk (:func:`chunk_folds`): a lazy Dask array."""
    return codes.map_blocks(_fold_block, n_folds, seed, dtype=np.int16)


def _code_block(y, classes):
    return np.searchsorted(classes, y)


def code_array(y, classes):
    """Class codes (positions in the sorted ``classes``) of a Dask array of labels: lazy."""
    return y.map_blocks(_code_block, classes, dtype=np.int64)


def _local_rows(folds, fold, side):
    """The chunk's points of a problem: all, a fold's training or its validation points."""
    if side == ALL:
        return None
    return np.flatnonzero(folds != fold) if side == TRAIN else np.flatnonzero(folds == fold)


def _labels(codes, target):
    """``+1`` where the class code is ``target``, ``-1`` elsewhere (one problem)."""
    return np.where(codes == target, 1.0, -1.0)


def _chunk_table(codes, folds, n_folds, n_classes):
    """Points per (fold, class) of one chunk: (n_folds or 1, n_classes)."""
    f = np.zeros(len(codes), dtype=np.int64) if folds is None else folds.astype(np.int64)
    return np.bincount(f * n_classes + codes, minlength=max(n_folds, 1) * n_classes).reshape(-1, n_classes)


def _chunk_take(F, codes, folds, target, fold, side, positions, n_cols, offset):
    """Global indices, feature rows (``n_cols`` columns) and labels of the problem's points
    at ``positions``."""
    src = InMemoryRows(F, _labels(codes, target), _local_rows(folds, fold, side))
    idx, Fi, yi = src.take(positions, n_cols)
    return idx + offset, Fi, yi


def _chunk_columns(F, index, start, stop):
    return F[index, start:stop]


def _chunk_search(F, codes, folds, target, fold, side, working, coef, intercept, tol, max_add, ref, rows_up_to,
                  offset):
    """The violation search on one chunk (:meth:`kpm.hinge.rows.InMemoryRows.search`)."""
    src = InMemoryRows(F, _labels(codes, target), _local_rows(folds, fold, side))
    found = src.search(coef, intercept, working, tol, max_add, ref, rows_up_to)
    found.index = found.index + offset
    return found


def _chunk_along(F, codes, folds, target, fold, side, working, ref, direction, k, offset):
    """The points of the aggregated set along a ray on one chunk
    (:meth:`kpm.hinge.rows.InMemoryRows.along`)."""
    src = InMemoryRows(F, _labels(codes, target), _local_rows(folds, fold, side))
    idx, Fi, yi, score, n_found = src.along(ref, direction, working, k)
    return idx + offset, Fi, yi, score, n_found


def _chunk_line(F, codes, folds, target, fold, side, method, args):
    """A statistic of one chunk's points of a problem: the
    :class:`kpm.hinge.rows.InMemoryRows` method ``method`` (``column_range``,
    ``line_derivatives``, ``line_hinge`` or ``margin_counts``) on them."""
    return getattr(InMemoryRows(F, _labels(codes, target), _local_rows(folds, fold, side)), method)(*args)


def _chunk_curves(F, codes, folds, fold, side, paths, n_classes, with_errors, block):
    """:func:`kpm.machine.engine.curve_sums` of the paths over one chunk's points of a problem."""
    rows = _local_rows(folds, fold, side)
    rows = np.arange(len(codes)) if rows is None else rows
    return curve_sums(paths, F, ovr_targets(codes, n_classes), codes if with_errors else None, rows, block)


def _chunk_predictions(F, codes, coef, intercept, n_classes):
    """Predicted-class counts, correct predictions and class counts of one chunk's points."""
    D = coef.shape[1]
    pred = predict_codes(F[:, :D] @ coef.T + intercept[None, :])
    return (np.bincount(pred, minlength=n_classes), int(np.sum(pred == codes)),
            np.bincount(codes, minlength=n_classes))


# --------------------------------------------------------------------------- client side
class _PerChunk(list):
    """Arguments of a task per chunk: entry ``c`` goes to chunk ``c``'s task."""


def _chunk_futures(arr):
    """The futures of a persisted Dask array's row chunks, in row order."""
    from distributed import futures_of

    by_key = {f.key: f for f in futures_of(arr)}
    keys = arr.__dask_keys__()
    return _PerChunk(by_key[k[0] if isinstance(k, list) else k] for k in keys)


def _merge(parts, max_add, D):
    """One :class:`Violations` from the chunks' (in row order), the ``max_add`` most violated,
    and which of them came without their rows (chunks that found too many to send them)."""
    index = np.concatenate([p.index for p in parts])
    viol = np.concatenate([p.viol for p in parts])
    keep = top_violations(viol, max_add)
    sent = [p.features.shape[1] == D for p in parts]
    rows = np.concatenate([p.features if ok else np.zeros((len(p.index), D)) for p, ok in zip(parts, sent)])
    missing = np.concatenate([np.full(len(p.index), not ok) for p, ok in zip(parts, sent)])[keep]
    return missing, Violations(
        objective=float(sum(p.objective for p in parts)),
        n_violated=int(sum(p.n_violated for p in parts)),
        index=index[keep],
        viol=viol[keep],
        features=np.asfortranarray(rows[keep]),
        labels=np.concatenate([p.labels for p in parts])[keep],
        aggregated=np.concatenate([p.aggregated for p in parts])[keep],
        sums=None if parts[0].sums is None else merge_compensated([p.sums for p in parts]),
        n_aggregated=int(sum(p.n_aggregated for p in parts)),
    )


class DaskRows:
    """Features, class codes and CV folds persisted on the workers of a Dask client.

    Parameters
    ----------
    client : distributed.Client
    F : dask array (n, n_columns)
        The features, chunked by rows only (one chunk across the columns).
    codes : dask array (n,) of int
        Class codes ``0..n_classes-1``, with the chunks of ``F``.
    n_classes : int
    folds : dask array (n,) of int, optional
        Each point's CV fold ``0..n_folds-1``, with the chunks of ``F``.
    n_folds : int
    grid : ndarray
        The D grid.
    cg_options : dict
        The constraint generation's settings.
    basis : NystroemBasis
        The landmarks' eigenfunctions whose values ``F`` holds.

    Attributes
    ----------
    Y : ndarray (n, n_problems)
        Zeros of the targets' shape (the fit's model selection reads only their length: the
        targets stay on the workers).
    weights, loo_groups, cv_total : None
        No sample weights, no duplicate groups, the pooled CV error's denominator the points.
    loo : False
        The distributed fit has K folds (the papers' LP; no leave-one-out error).
    phases : dict
        The seconds of the data's phases (:class:`kpm.machine.family.FitData`).
    """

    weights = None
    loo_groups = None
    cv_total = None
    loo = False

    def __init__(self, client, F, codes, n_classes, folds=None, n_folds=0, grid=None, cg_options=None, basis=None,
                 phases=None):
        self.client = client
        self.grid = grid
        self.basis = basis
        self.phases = {} if phases is None else phases
        self.cg_options = dict(cg_options or {})
        arrays = client.persist([F, codes] + ([folds] if folds is not None else []))
        self._F, self._codes = _chunk_futures(arrays[0]), _chunk_futures(arrays[1])
        self._folds = _chunk_futures(arrays[2]) if folds is not None else _PerChunk([None] * len(self._F))
        self.shape = F.shape
        self.n_rows_total = F.shape[0]
        self.offsets = np.concatenate([[0], np.cumsum(F.chunks[0])]).astype(np.int64)
        self.n_classes = int(n_classes)
        self.n_problems = 1 if n_classes == 2 else self.n_classes
        self.n_folds = int(n_folds)
        tables = self._map(_chunk_table, self._codes, self._folds, self.n_folds, self.n_classes)
        self.table = np.stack(tables)  # (chunks, folds or 1, classes)
        # the columns as grow_path sees them: a shape only, the values stay on the workers
        self.columns = np.broadcast_to(np.float64(0.0), self.shape)
        self.Y = np.broadcast_to(np.float64(0.0), (self.shape[0], self.n_problems))

    def _map(self, fn, *per_chunk, chunks=None, **common):
        """``fn`` on each chunk (the per-chunk arguments are lists over all chunks), gathered."""
        chunks = range(len(self._F)) if chunks is None else chunks
        futs = [
            self.client.submit(fn, *[a[c] if isinstance(a, _PerChunk) else a for a in per_chunk], pure=False, **common)
            for c in chunks
        ]
        return self.client.gather(futs)

    # ------------------------------------------------------------------ sizes
    def row_counts(self, fold=None, side=ALL):
        """Points of a problem in each chunk."""
        total = self.table.sum(axis=(1, 2))
        if side == ALL:
            return total
        val = self.table[:, fold, :].sum(axis=1)
        return val if side == VAL else total - val

    def fold_class_counts(self, fold, side):
        """Points of each class in a fold's training or validation points."""
        val = self.table[:, fold, :].sum(axis=0)
        return val if side == VAL else self.table.sum(axis=(0, 1)) - val

    # ------------------------------------------------------------------ paths and curves
    def source(self, problem, fold=None):
        """The row source of one one-vs-rest problem on all points or a fold's training points."""
        return DaskRowSource(self, 1 if self.n_classes == 2 else problem, fold)

    def solvers(self, fold=None):
        """Constraint-generation path solvers of every problem (a fold's training points)."""
        return [ConstraintGenerationPath(self.source(c, fold), **self.cg_options) for c in range(self.n_problems)]

    @property
    def n(self):
        return int(self.n_rows_total)

    def val_sizes(self):
        return None if not self.n_folds else [self.fold_sizes(k)[1] for k in range(self.n_folds)]

    def check_folds(self):
        """Every fold has a validation point and training points of every class."""
        hint = ("with client= the folds are drawn chunk by chunk and need training points of every class in "
                "every fold, which a class with fewer points than folds may not have; use fewer folds (cv), or "
                "fit in memory (client=None), which keeps a class too small for every fold in every training part")
        for k in range(self.n_folds):
            check_fold(k, np.count_nonzero(self.fold_class_counts(k, "train")), self.n_classes,
                       self.fold_class_counts(k, "val").sum(), hint)

    def lp_curves(self, k):
        """Fold ``k``'s curves of the papers' LP (:func:`kpm.machine.nystroem_data.lp_fold_curves`)."""
        from kpm.machine.nystroem_data import lp_fold_curves

        return lp_fold_curves(self, k)

    def curve_sums(self, paths, fold=None, side=ALL, with_errors=False, block=1024):
        """Misclassified points and ``n *`` the clipped risk of the paths' solutions at every grid D
        over a problem's points (:func:`kpm.machine.engine.curve_sums`), summed over the chunks."""
        parts = self._map(_chunk_curves, self._F, self._codes, self._folds, fold, side, paths,
                          self.n_classes, with_errors, block)
        return sum(p[0] for p in parts), sum(p[1] for p in parts)

    def fold_sizes(self, fold):
        """Training and validation points of a fold."""
        return int(self.row_counts(fold, TRAIN).sum()), int(self.row_counts(fold, VAL).sum())

    def fold_curve_sums(self, paths, fold):
        """Misclassified validation points and ``n_train *`` the clipped training risk of a
        fold's paths on their grid."""
        errors, _ = self.curve_sums(paths, fold, VAL, with_errors=True)
        _, clipped = self.curve_sums(paths, fold, TRAIN)
        return errors, clipped

    def full_path(self, paths, grid, Y):
        """The full-data :class:`kpm.machine.engine.FullPath` (``Y`` only for its length n)."""
        errors, clipped = self.curve_sums(paths, with_errors=True)
        return FullPath.from_paths(paths, None, grid, Y, clipped_sums=clipped, error_sums=errors)

    def prediction_counts(self, coef, intercept):
        """``(predicted counts per class, correct predictions, counts per class)`` of a model
        ``F[:, :D] coef.T + intercept`` (coef (n_problems, D)) on all points."""
        parts = self._map(_chunk_predictions, self._F, self._codes, np.atleast_2d(coef),
                          np.atleast_1d(intercept), self.n_classes)
        return sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts)


class DaskRowSource:
    """A row source (:class:`kpm.hinge.rows.InMemoryRows`'s methods) over
    :class:`DaskRows`: the points of one problem, searched chunk by chunk on the workers."""

    def __init__(self, rows, target, fold=None):
        self.rows, self.target, self.fold = rows, target, fold
        self.side = ALL if fold is None else TRAIN
        self.cum = np.concatenate([[0], np.cumsum(rows.row_counts(fold, self.side))]).astype(np.int64)
        self.n_rows = int(self.cum[-1])
        self.shape = rows.shape

    def take(self, positions, n_cols):
        """``(index, features, labels)`` of the problem's points at ``positions`` (increasing):
        their first ``n_cols`` columns."""
        r = self.rows
        chunk = np.searchsorted(self.cum, positions, side="right") - 1
        used = np.unique(chunk)
        local = _PerChunk(positions[chunk == c] - self.cum[c] if c in used else None for c in range(len(r._F)))
        parts = r._map(_chunk_take, r._F, r._codes, r._folds, self.target, self.fold, self.side, local,
                       n_cols, _PerChunk(r.offsets[:-1]), chunks=used)
        return (np.concatenate([p[0] for p in parts]), np.asfortranarray(np.concatenate([p[1] for p in parts])),
                np.concatenate([p[2] for p in parts]))

    def columns(self, index, start, stop):
        """``F[index, start:stop]`` (global indices in any order): the working set's next columns."""
        r = self.rows
        order = np.argsort(index, kind="stable")
        srt = np.asarray(index)[order]
        bounds = np.searchsorted(srt, r.offsets)
        used = np.flatnonzero(np.diff(bounds))
        local = _PerChunk(srt[bounds[c] : bounds[c + 1]] - r.offsets[c] for c in range(len(r._F)))
        parts = r._map(_chunk_columns, r._F, local, start, stop, chunks=used)
        out = np.empty((len(srt), stop - start), order="F")
        out[order] = np.concatenate(parts) if parts else np.empty((0, stop - start))
        return out

    def search(self, coef, intercept, working, tol, max_add=None, ref=None) -> Violations:
        """The violation search, one task per chunk; only the violated points outside
        ``working`` travel back with their rows. With ``max_add`` each chunk returns its
        ``max_add`` most violated points, with their rows only if they are at most
        ``max_add / chunks`` (as many rows as the result holds, not one result's worth per
        chunk); the rows of the overall ``max_add`` that came without are fetched in a
        second step."""
        r = self.rows
        cap = None if max_add is None or len(r._F) == 1 else max(1, max_add // len(r._F))
        parts = r._map(_chunk_search, r._F, r._codes, r._folds, self.target, self.fold, self.side,
                       self._local(working), coef, float(intercept), tol, max_add, ref, cap,
                       _PerChunk(r.offsets[:-1]))
        missing, found = _merge(parts, max_add, len(coef))
        if missing.any():
            found.features[missing] = self.columns(found.index[missing], 0, len(coef))
        return found

    def along(self, ref, direction, working, k):
        """The ``k`` points of the aggregated set most negative along ``direction``
        (:meth:`kpm.hinge.rows.InMemoryRows.along`), one task per chunk."""
        r = self.rows
        parts = r._map(_chunk_along, r._F, r._codes, r._folds, self.target, self.fold, self.side,
                       self._local(working), ref, direction, k, _PerChunk(r.offsets[:-1]))
        index, features, labels, scores = (np.concatenate([p[j] for p in parts]) for j in range(4))
        keep = top_violations(scores, k)
        return (index[keep], np.asfortranarray(features[keep]), labels[keep], scores[keep],
                int(sum(p[4] for p in parts)))

    def column_range(self):
        """Per class, the smallest and largest ``F[:, 0]`` of the problem's points."""
        parts = np.stack(self._line("column_range"))
        return np.stack([parts[:, :, 0].min(axis=0), parts[:, :, 1].max(axis=0)], axis=1)

    def line_derivatives(self, slopes, lo, width, n_bins):
        """:meth:`kpm.hinge.rows.InMemoryRows.line_derivatives`, summed over the chunks."""
        return sum(p.astype(np.int64) for p in self._line("line_derivatives", slopes, lo, width, n_bins))

    def line_hinge(self, slopes, intercepts):
        """:meth:`kpm.hinge.rows.InMemoryRows.line_hinge`, merged over the chunks."""
        return merge_compensated(self._line("line_hinge", slopes, intercepts))

    def margin_counts(self, coef, intercept, widths):
        """:meth:`kpm.hinge.rows.InMemoryRows.margin_counts`, summed over the chunks."""
        return sum(self._line("margin_counts", coef, intercept, widths))

    def _line(self, method, *args):
        r = self.rows
        return r._map(_chunk_line, r._F, r._codes, r._folds, self.target, self.fold, self.side, method, args)

    def _local(self, working):
        """The working set's points of each chunk, as chunk-local row indices."""
        r = self.rows
        W = np.sort(working)
        bounds = np.searchsorted(W, r.offsets)
        return _PerChunk(W[bounds[c] : bounds[c + 1]] - r.offsets[c] for c in range(len(r._F)))
