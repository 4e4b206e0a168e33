"""A seeded sample of the fuzz harness (benchmarks/fuzz_inputs.py); the full run is in
docs/results/robustness.md."""

import numpy as np
import pytest

import fuzz_inputs as F  # benchmarks/ is on sys.path (tests/benchmarks/conftest.py)

N_CASES = 1200
SEED = 1  # the full run uses seed 0: the sample adds cases rather than repeating them


@pytest.fixture(scope="module")
def records():
    return F.run_cases(N_CASES, seed=SEED, timeout=30.0)


def _failures(records):
    bad = [r for r in records if r["outcome"] not in ("correct", "clear_error")]
    return "\n".join(
        f"case {r['index']} (replay: python benchmarks/fuzz_inputs.py --seed {SEED} --case {r['index']}): "
        f"{r['target']} on {r['mutation']}: {r['outcome']}: {r['detail']}"
        for r in bad
    )


@pytest.mark.slow
def test_sample_covers_every_target_and_input_kind(records):
    assert len(records) == N_CASES
    assert {r["target"] for r in records} == set(F._targets())
    groups = {F.MUTATIONS[r["mutation"]][0] for r in records}
    assert groups == {g for g, _ in F.MUTATIONS.values()}


@pytest.mark.slow
def test_no_hang_unclear_crash_or_silent_wrong_answer(records):
    failures = _failures(records)
    assert not failures, "fuzz failures:\n" + failures


def test_targets_and_input_kinds_restrict_the_cases():
    recs = F.run_cases(4, seed=SEED, timeout=60.0, only=("accuracy",), names=("NystroemKPM",))
    assert [r["target"] for r in recs] == ["NystroemKPM"] * 4
    assert all(F.MUTATIONS[r["mutation"]][0] == "accuracy" for r in recs)
    with pytest.raises(ValueError, match=r"unknown target\(s\) \['Nope'\]"):
        F._selected_targets(("Nope",))


# the classification itself: the harness must be able to fail
def test_exception_classification():
    from kpm.kernels import make_kernel

    def raised(f):
        try:
            f()
        except Exception as exc:  # noqa: BLE001
            return exc
        raise AssertionError("no exception")

    assert F.classify_exception(raised(lambda: make_kernel("rbf", sigma=-1.0))) == "clear_error"
    assert F.classify_exception(raised(lambda: np.ones(3)[5])) == "unclear_crash"
    assert F.classify_exception(raised(lambda: np.ones(3) + np.ones(4))) == "unclear_crash"
    assert F.classify_exception(raised(lambda: np.einsum("ij,ij->i", np.ones(3), np.ones(3)))) == "unclear_crash"
    assert F.classify_exception(raised(lambda: {}["k"])) == "unclear_crash"
    assert F.classify_exception(np.linalg.LinAlgError("Internal Error.")) == "unclear_crash"
    assert F.classify_exception(F.UserKernelError("mine")) == "clear_error"


def test_judge_flags_wrong_answers():
    targets = F._targets()
    t = targets["KernelProjection"]
    d = {"params": {"sigma": 1.0}, "X": np.random.default_rng(0).normal(size=(10, 2))}
    good = {"transform": np.ones((3, 2))}
    assert F.judge(t, d, "same", good, [], {"transform": np.ones((3, 2))})[0] == "correct"
    off = {"transform": np.ones((3, 2)) + 4e-16 * np.eye(3, 2)}
    assert F.judge(t, d, "same", off, [], good)[0] == "silent_wrong"
    assert F.judge(t, d, "valid", {"transform": np.full((3, 2), np.nan)}, [], None)[0] == "silent_wrong"
    assert F.judge(t, d, "error", good, [], None)[0] == "silent_wrong"
    # identical training points: a constant kernel must come with a warning
    d_const = {"params": {"sigma": 1.0}, "X": np.zeros((10, 2))}
    assert F.judge(t, d_const, "valid", good, [], None)[0] == "silent_wrong"
    # a clear error on a layout variant whose canonical input is accepted is not clear
    from kpm.kernels import make_kernel

    try:
        make_kernel("rbf", sigma=-1.0)
    except ValueError as exc:
        clear = exc
    assert F.judge(t, d, "same", clear, [], None)[0] == "clear_error"
    assert F.judge(t, d, "same", clear, [], good)[0] == "unclear_crash"


def test_a_case_that_hangs_is_reported_as_a_hang(monkeypatch):
    import time

    def slow(d):
        time.sleep(60)

    targets = F._targets()
    name = sorted(targets)[0]
    monkeypatch.setitem(F.__dict__, "_targets", lambda: {**targets, name: F.Target(name, slow, targets[name].data,
                                                                                targets[name].groups)})
    (rec,) = F.run_cases(1, seed=0, timeout=2.0)
    assert rec["outcome"] == "hang" and rec["target"] == name


# the accuracy oracles: they must flag a clearly wrong answer and pass a right one
def _accuracy_case(name, family, seed=0):
    targets = F._targets()
    t = targets[name]
    base = t.data(np.random.default_rng([seed, F.DATA_SEEDS, 0, len(name)]))
    d, expect, _ = F.MUTATIONS[family][1](F._copy(base), np.random.default_rng([seed, 1]), t)
    assert expect == "accurate"
    result, rec = F._run_target(t, d)
    return t, d, result, rec


def test_accuracy_oracle_flags_wrong_classifiers_and_regressors():
    t, d, out, rec = _accuracy_case("KernelPCRClassifier", "acc_separable")
    assert F.judge(t, d, "accurate", out, rec, None)[0] == "correct"
    wrong = dict(out, predict=np.full_like(out["predict"], np.bincount(d["y"]).argmin()))
    outcome, detail = F.judge(t, d, "accurate", wrong, [], None)
    assert outcome == "silent_wrong" and "where an SVC on the same kernel (C tuned) has" in detail
    t, d, out, rec = _accuracy_case("KernelPCRRegressor", "acc_offset")
    assert F.judge(t, d, "accurate", out, rec, None)[0] == "correct"
    outcome, detail = F.judge(t, d, "accurate", dict(out, predict=out["predict"] - 1.0), [], None)
    assert outcome == "silent_wrong" and "kernel ridge regression on the same kernel" in detail
    # a constant target must come back exactly
    t, d, out, rec = _accuracy_case("KernelPCRRegressor", "acc_shifted")
    assert np.ptp(d["y"]) == 0 and F.judge(t, d, "accurate", out, rec, None)[0] == "correct"
    assert F.judge(t, d, "accurate", dict(out, predict=out["predict"] + 0.01), [], None)[0] == "silent_wrong"


def test_accuracy_oracle_for_transformers():
    t, d, out, rec = _accuracy_case("LinearPCADenoiser", "acc_nonlinear")
    assert F.judge(t, d, "accurate", out, rec, None)[0] == "correct"
    assert F.judge(t, d, "accurate", dict(out, transform=out["transform"] + 1e-3), [], None)[0] == "silent_wrong"
    t, d, out, rec = _accuracy_case("KernelProjection", "acc_separable", seed=0)
    assert d["params"]["n_components"] == 3 and d["params"]["centered"]  # the oracle applies
    assert F.judge(t, d, "accurate", out, rec, None)[0] == "correct"
    other = dict(out, transform=out["transform"] ** 2)  # not a basis change of the same span
    outcome, detail = F.judge(t, d, "accurate", other, [], None)
    assert outcome == "silent_wrong" and "span other directions than KernelPCA's" in detail


def test_a_warning_about_the_fit_is_not_silent():
    t, d, out, rec = _accuracy_case("KernelPCRClassifier", "acc_separable")
    wrong = dict(out, predict=np.full_like(out["predict"], np.bincount(d["y"]).argmin()))
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("KernelPCRClassifier with n_components=1 fits its training data clearly worse", UserWarning)
    assert F.judge(t, d, "accurate", wrong, caught, None)[0] == "correct"


def test_only_restricts_the_cases_to_a_group():
    targets = F._targets()
    specs = [F.case_spec(i, 0, targets, ("accuracy",)) for i in range(60)]
    assert {F.MUTATIONS[m][0] for _, m, _ in specs} == {"accuracy"}
    assert {t for t, _, _ in specs} == {n for n, t in targets.items() if "accuracy" in t.groups}
