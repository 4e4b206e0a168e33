"""The Nyström KPM's training data on a Dask cluster.

With ``client=`` a :class:`~kpm.machine.nystroem.NystroemKPM` (the Kernel Projection Machine of
Blanchard, Massart, Vert & Zwald 2004 on Nyström eigenfunctions) keeps its training data on the
workers: the eigenfunction features ``K(X, Z) P`` (:func:`feature_array`), the class codes and
the folds are persisted there as a :class:`~kpm.machine.dask_data.DaskRows`
(:func:`dask_training_data`). :func:`check_training_data` validates numpy or Dask inputs.
"""

from __future__ import annotations

import numbers
import time

import numpy as np

from kpm.machine.dask_data import DaskRows, dask_codes, fold_array, is_dask_array
from kpm.machine.folds import make_splits
from kpm.machine.nystroem_data import feature_block, feature_block_f
from kpm.validation import check_estimator_data, check_samples

__all__ = ["check_training_data", "feature_array", "dask_training_data", "splitter_folds", "dask_scores",
           "dask_accuracy"]


def check_training_data(est, X, y, distributed=False):
    """``(X, y, n_features_in)``: numpy X in canonical form, or a checked dask array
    (``distributed``: a Dask y stays a Dask array)."""
    if not is_dask_array(X) and not (distributed and is_dask_array(y)):
        X, y = check_estimator_data(est, X, y, min_samples=2)
        return X, y, X.shape[1]
    if not is_dask_array(X):
        X = check_samples(X)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D, got a dask array of shape {X.shape}")
    if np.isnan(X.shape[0]):
        raise ValueError("X must have known chunk sizes (call X.compute_chunk_sizes())")
    if is_dask_array(y) and not distributed:
        y = y.compute()
    y = y if is_dask_array(y) else np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be 1-D with {X.shape[0]} entries, got shape {y.shape}")
    return X, y, X.shape[1]

def feature_array(X, basis, rows):
    """``K(X, Z) P`` as a lazy Dask array of row blocks of ``rows`` (Fortran-ordered blocks)."""
    import dask.array as da  # the optional dependency, imported where it is used

    Xd = X.rechunk((rows, X.shape[1])) if is_dask_array(X) else da.from_array(X, chunks=(rows, X.shape[1]))
    D = basis.projection.shape[1]
    return Xd.map_blocks(feature_block_f, basis.landmarks, basis.projection, basis.kernel, dtype=float,
                         chunks=(Xd.chunks[0], (D,)))

def dask_training_data(X, y, cv, rule, seeds, basis, block_rows, client, cg_options, phases, t, chunk_bytes):
    """``(classes, data)``: the classes and the training data with the features persisted on
    the workers (:class:`DaskRows`; K folds of ``cv``, an int or a splitter, when the ``rule``
    needs them, drawn with ``seeds[2]``); the features' chunks are whole row blocks of about
    ``chunk_bytes``. ``phases`` gets the seconds since ``t`` as its ``features``."""
    F = feature_array(X, basis, block_rows)
    chunk = block_rows * max(1, chunk_bytes // (8 * F.shape[1] * block_rows))
    F = F.rechunk((chunk, F.shape[1]))
    classes, codes = dask_codes(y, F.chunks[0])
    folds, n_folds = None, 0
    if rule.needs_cv:
        if isinstance(cv, numbers.Integral):
            n_folds = int(cv)
            folds = fold_array(codes, n_folds, int(seeds[2]))
        else:
            folds, n_folds = splitter_folds(cv, codes, int(seeds[2]), len(classes))
    data = DaskRows(client, F, codes, len(classes), folds, n_folds, basis.grid, cg_options, basis, phases)
    data.check_folds()
    phases["features"] = time.perf_counter() - t
    return classes, data

def splitter_folds(cv, codes, seed, n_classes):
    """The folds of a CV splitter as a Dask array of fold ids (the splitter reads the class
    codes on the client: ``n`` integers); its validation sets must partition the points."""
    import dask.array as da  # the optional dependency, imported where it is used

    codes_np = codes.compute()
    splits = make_splits(codes_np, cv, seed, n_classes)
    fold = np.full(codes.shape[0], -1, dtype=np.int16)
    for k, (_, va) in enumerate(splits):
        if np.any(fold[va] >= 0):
            raise ValueError("with a Dask client the cv splitter's validation sets must not overlap")
        fold[va] = k
    if np.any(fold < 0):
        raise ValueError("with a Dask client every point must be in one validation set of the cv splitter")
    return da.from_array(fold, chunks=(codes.chunks[0],)), len(splits)


def dask_scores(X, est):
    """The decision values (n, n_problems) of a Dask X under a fitted Nyström KPM ``est`` (its
    kernel expansion on the landmarks), lazily, in row blocks of ``est.block_rows_``."""
    if X.ndim != 2 or X.shape[1] != est.n_features_in_:
        raise ValueError(f"X has {X.shape[1] if X.ndim == 2 else X.shape} features, expected {est.n_features_in_}")
    A = np.atleast_2d(est.dual_coef_).T
    Xd = X.rechunk((est.block_rows_, X.shape[1]))
    fd = Xd.map_blocks(feature_block, est.landmarks_, A, est.kernel_, dtype=float,
                       chunks=(Xd.chunks[0], (A.shape[1],)))
    return fd + np.atleast_1d(est.intercept_)[None, :]


def dask_accuracy(pred, y, sample_weight=None, client=None):
    """The (weighted) share of the lazy Dask labels ``pred`` equal to ``y`` (numpy or Dask),
    computed blockwise where the data are (on ``client``'s workers): only the number travels."""
    import dask.array as da  # the optional dependency, imported where it is used

    y = y if is_dask_array(y) else da.from_array(np.asarray(y), chunks=pred.chunks)
    if y.shape != pred.shape:
        raise ValueError(f"y has shape {y.shape}, expected {pred.shape}")
    hit = pred == y.rechunk(pred.chunks)
    if sample_weight is None:
        acc = hit.mean()
    else:
        w = sample_weight if is_dask_array(sample_weight) else da.from_array(np.asarray(sample_weight, float),
                                                                              chunks=pred.chunks)
        acc = (w.rechunk(pred.chunks) * hit).sum() / w.sum()
    return float(client.compute(acc).result() if client is not None else acc.compute())
