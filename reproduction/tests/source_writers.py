"""Source files in their original formats, written back from the benchmark data files.

The real source files (public repositories, pinned in kpm_reproduce.data.registry) cannot be
committed and CI has no network, so the tests write them from the data files in KPM_DATA:
these writers invert the converters of kpm_reproduce.data.convert.

* The IDA ``.asc`` files and the Pima CSV come out byte for byte as the public files: their
  SHA-256 equals the registry's (tested).
* The others lose what the data files do not keep: new-thyroid's hyper/hypo distinction
  (written as 2 and 3 in turn), flare's Zurich class and spot size letters and which of
  X, I, C the spot distribution was (written in turn), the 15 splice sequences with ambiguity
  codes (stand-ins are written) and the instance names of repeated sequences, the original
  row order of flare and splice (the copies of a pattern follow one another here), and the
  MAT and HDF5 containers' own bytes. Their SHA-256 is that of the written file.

The raw UCI values are recovered from the standardised ones with each column's minimum and
maximum in the public file (the ANCHORS below: summary numbers, not data), rounded to the
decimals the file uses.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

import numpy as np

from kpm_reproduce.data.registry import SOURCES

#: (minimum, maximum) of each raw column in the public files, for the inverse scaling.
ANCHORS = {
    "diabetis": ([0, 0, 0, 0, 0, 0.0, 0.078, 21], [17, 199, 122, 99, 846, 67.1, 2.42, 81]),
    "thyroid": ([65, 0.5, 0.2, 0.1, -0.7], [144, 25.3, 10.0, 56.4, 56.3]),
    "twonorm": (
        [-4.2497, -3.9606, -4.4798, -3.8891, -3.9099, -4.0095, -3.7334, -4.5744, -3.8136,
         -4.1999, -3.9204, -3.8262, -3.9451, -3.8516, -3.6978, -3.6976, -3.9428, -4.0653,
         -4.1218, -3.7831],
        [3.5782, 4.3451, 4.4039, 4.2589, 5.6395, 3.9901, 4.4522, 3.8648, 4.254, 4.0829,
         4.0953, 4.3025, 3.7817, 4.1238, 3.5485, 4.2439, 3.7233, 4.0557, 4.3238, 4.279]),
}
DECIMALS = {"diabetis": [0, 0, 0, 0, 0, 1, 3, 0], "thyroid": [0, 1, 1, 1, 1],
            "twonorm": [4] * 20}

PIMA_HEADER = ("NumTimesPrg,PlGlcConc,BloodP,SkinThick,TwoHourSerIns,BMI,DiPedFunc,Age,"
               "target\n")
THYROID_HEADER = ("Class,T3-resin_uptake,Total_Serum_thyroxin,Total serum triiodothyronine,"
                  "basal_tsh,max_abs_diff_tsh\n")
FLARE_HEADER = ("class largest_spot_size spot_distribution activity evolution past_activity "
                "historically_complex hc_past area area_largest C M X\n")
SPLICE_HEADER = "Class, Donor,                          Sequence\n"
IDA_SETS = ("banana", "breast_cancer", "german", "heart", "image", "ringnorm", "titanic",
            "waveform")
#: Data sets whose source files the writers give back byte for byte.
BYTE_IDENTICAL = (*IDA_SETS, "diabetis")


def raw_values(name, z):
    """The raw UCI columns behind the standardised ``z`` (one column per feature)."""
    lo, hi = (np.asarray(a, dtype=np.float64) for a in ANCHORS[name])
    zmin, zmax = z.min(0), z.max(0)
    cols = [np.round(lo[j] + (z[:, j] - zmin[j]) * ((hi[j] - lo[j]) / (zmax[j] - zmin[j])), d)
            for j, d in enumerate(DECIMALS[name])]
    return np.column_stack(cols)


def _pool(z):
    """Every row of the data set: each pattern's copies one after the other."""
    return np.repeat(np.arange(len(z["multiplicity"])), z["multiplicity"])


def write_ida(z, role, path):
    part, kind, r = role.split("_")
    idx = z[part][int(r) - 1]
    a = z["x"][idx] if kind == "data" else z["t"][idx].astype(np.float64)[:, None]
    fmt = "%16.7e" * a.shape[1] + "\n"
    Path(path).write_text((fmt * len(a)) % tuple(a.ravel().tolist()))


def write_pima(z, path):
    raw = raw_values("diabetis", z["x"])
    fmt = "%d,%d,%d,%d,%d,%.1f,%.3f,%d,%d\n"
    rows = [fmt % (*r, 1 if t == 1 else 0) for r, t in zip(raw.tolist(), z["t"])]
    Path(path).write_text(PIMA_HEADER + "".join(rows))


def write_new_thyroid(z, path):
    raw = raw_values("thyroid", z["x_uci_standardised"])
    cls = np.where(z["t"] == -1, 1, 2 + np.arange(len(z["t"])) % 2)   # 2 and 3 in turn
    rows = ["%d,%d,%.1f,%.1f,%.1f,%.1f\n" % (c, *r) for c, r in zip(cls, raw.tolist())]
    Path(path).write_text(THYROID_HEADER + "".join(rows))


def write_mat(x, t, path, seed=None):
    """A MAT file with ``data`` and ``target`` (int16 column), rows shuffled if ``seed``."""
    import scipy.io

    order = np.arange(len(x)) if seed is None else np.random.default_rng(seed).permutation(len(x))
    scipy.io.savemat(path, {"data": x[order], "target": t[order].astype(np.int16)[:, None]})


def write_flare(z, path):
    rows = []
    for k, i in enumerate(_pool(z)):
        codes = z["x"][i].astype(int).tolist()
        dist = "O" if z["t"][i] == -1 else "XIC"[k % 3]
        fields = ["ABCDEFH"[k % 7], "XRSAHK"[k % 6], dist, *codes[:6], 1, *codes[6:]]
        rows.append(" ".join(map(str, fields)) + "\n")
    Path(path).write_text(FLARE_HEADER + "".join(rows))


def write_splice(z, path):
    rows, seen = [], set()
    for k, i in enumerate(_pool(z)):
        name = z["uci_id"][i] if i not in seen else f"{z['uci_id'][i]}-COPY{k}"
        seen.add(i)
        rows.append(f"{z['uci_class'][i] + ',':7s}{name + ',':32s}{z['seq'][i]}\n")
        if k % 1000 == 10:   # stand-ins for the sequences with ambiguity codes (dropped)
            bad = z["seq"][i][:30] + "DNSR"[(k // 1000) % 4] + z["seq"][i][31:]
            rows.append(f"{'N,':7s}{f'AMBIGUOUS-{k},':32s}{bad}\n")
    Path(path).write_text(SPLICE_HEADER + "".join(rows))


def write_usps(z, path):
    import h5py

    with h5py.File(path, "w", track_order=True) as f:
        for part in ("train", "test"):
            g = f.create_group(part)
            g.create_dataset("data", data=z[f"x_{part}"], track_times=False)
            g.create_dataset("target", data=z[f"y_{part}"].astype(np.int32), track_times=False)


def load(data_dir, name):
    rel = "usps/usps.npz" if name == "usps" else f"raetsch/{name}.npz"
    with np.load(Path(data_dir) / rel) as z:
        return {k: z[k] for k in z.files}


def write_sources(data_dir, name, root):
    """Write the source files of ``name`` under ``root`` at their registry keys.

    Returns
    -------
    dict
        ``{role: SourceFile}`` with the SHA-256 of the written files (the test registry).
    """
    z = load(data_dir, name)
    files = SOURCES[name]
    paths = {role: Path(root) / sf.key for role, sf in files.items()}
    for p in paths.values():
        p.parent.mkdir(parents=True, exist_ok=True)
    if name in IDA_SETS:
        for role, p in paths.items():
            write_ida(z, role, p)
    elif name == "diabetis":
        write_pima(z, paths["uci"])
    elif name == "thyroid":
        write_new_thyroid(z, paths["uci"])
        write_mat(z["x"], z["t"], paths["raetsch_mat"], seed=0)
    elif name == "twonorm":
        write_mat(raw_values("twonorm", z["x"]), z["t"], paths["mat"])
    elif name == "flare_solar":
        write_flare(z, paths["uci"])
    elif name == "splice":
        write_splice(z, paths["uci"])
    elif name == "usps":
        write_usps(z, paths["h5"])
    return {role: replace(files[role], sha256=sha256(paths[role])) for role in files}


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
