"""kpm_reproduce.data.fetch_data and ``kpm data fetch``, offline: the source files (written
from the data files by source_writers.py) are served by an HTTP server on 127.0.0.1, and the
whole path runs: download through pooch, SHA-256 checks, the cache, the conversion, and the
result compared bit for bit with the data files. Also: what the loaders and ``kpm datasets``
say when data are missing.

``test_real_sources_bit_for_bit`` checks the real public files; it needs them served
(KPM_TEST_REAL_SOURCES=1, from raw.githubusercontent.com or from $KPM_DATA_MIRROR)."""

import functools
import http.server
import os
import threading
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import source_writers as sw
from kpm_reproduce import datasets as ds
from kpm_reproduce.cli import app
from kpm_reproduce.data import SOURCES, fetch_data, fetch_sources


class _Handler(http.server.SimpleHTTPRequestHandler):
    disable_nagle_algorithm = True   # else each small file waits for a delayed TCP ack

    def log_message(self, *args):  # quiet; requests are counted instead
        pass

    def do_GET(self):
        self.server.requests.append(self.path)
        super().do_GET()


@pytest.fixture
def server(tmp_path):
    """An HTTP server on 127.0.0.1 serving ``root``; ``requests`` lists the paths asked for."""
    root = tmp_path / "served"
    root.mkdir()
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, directory=str(root)))
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield type("Server", (), {"root": root, "url": f"http://127.0.0.1:{httpd.server_port}/",
                              "requests": httpd.requests})
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


@pytest.fixture
def served(server, data_dir, monkeypatch):
    """Serve the source files of some data sets; the registry holds their test hashes."""

    def serve(*names):
        for name in names:
            monkeypatch.setitem(SOURCES, name, sw.write_sources(data_dir, name, server.root))
        return server

    return serve


def _same_as_data_files(data_dir, out, names):
    for name in names:
        got, ref = sw.load(out, name), sw.load(data_dir, name)
        assert list(got) == list(ref)
        for key in ref:
            assert got[key].dtype == ref[key].dtype, (name, key)
            if (name, key) in {("flare_solar", "x_std"), ("splice", "x_std")}:
                # sums over another row order (see test_data_convert.REORDERED_SUMS)
                np.testing.assert_allclose(got[key], ref[key], rtol=0, atol=1e-12)
            else:
                assert got[key].tobytes() == ref[key].tobytes(), (name, key)


NAMES = ("heart", "thyroid", "diabetis", "usps")    # one of each kind of source


def test_fetch_downloads_checks_caches_and_converts(served, data_dir, tmp_path):
    server = served(*NAMES)
    messages = []
    res = fetch_data(list(NAMES), to=tmp_path / "out", cache_dir=tmp_path / "cache",
                     base_url=server.url, log=messages.append)
    assert res.data_dir == tmp_path / "out" and res.downloaded == 40 + 2 + 1 + 1
    assert sorted(res.written) == sorted(tmp_path / "out" / r for r in (
        "raetsch/heart.npz", "raetsch/thyroid.npz", "raetsch/diabetis.npz", "usps/usps.npz"))
    assert len(server.requests) == 44
    _same_as_data_files(data_dir, tmp_path / "out", NAMES)
    assert str(tmp_path / "cache") in messages[0] and "KPM_CACHE" in messages[0]
    assert any(m.startswith("heart: 40 source file(s) (40 downloaded), SHA-256 checked")
               for m in messages)
    # the cache: the pinned files under OWNER/REPO/COMMIT/PATH, not downloaded again
    sf = SOURCES["heart"]["train_data_1"]
    assert (tmp_path / "cache" / "sources" / sf.key).is_file()
    again = fetch_data(["heart", "diabetis"], to=tmp_path / "out", cache_dir=tmp_path / "cache",
                       base_url=server.url, force=True, log=messages.append)
    assert again.downloaded == 0 and len(server.requests) == 44 and len(again.written) == 2
    _same_as_data_files(data_dir, tmp_path / "out", ["heart", "diabetis"])
    kept = fetch_data(["heart"], to=tmp_path / "out", cache_dir=tmp_path / "cache",
                      base_url=server.url, log=messages.append)
    assert kept.written == [] and kept.kept == [tmp_path / "out" / "raetsch" / "heart.npz"]
    # the record of where each file came from
    import json

    manifest = json.loads((tmp_path / "out" / "SOURCES.json").read_text())
    assert sorted(manifest) == ["raetsch/diabetis.npz", "raetsch/heart.npz",
                                "raetsch/thyroid.npz", "usps/usps.npz"]
    assert manifest["raetsch/thyroid.npz"][1]["url"] == (
        "https://raw.githubusercontent.com/" + SOURCES["thyroid"]["raetsch_mat"].key)


def test_wrong_hash_is_a_clear_error_and_leaves_nothing(served, tmp_path):
    server = served("diabetis")
    sf = SOURCES["diabetis"]["uci"]
    path = server.root / sf.key
    path.write_text(path.read_text().replace("\n6,148,", "\n7,148,", 1))   # one changed byte
    with pytest.raises(ValueError, match=f"{sf.url(server.url)} failed its SHA-256 check"):
        fetch_data(["diabetis"], to=tmp_path / "out", cache_dir=tmp_path / "cache",
                   base_url=server.url, log=lambda m: None)
    assert not (tmp_path / "out" / "raetsch" / "diabetis.npz").exists()
    assert not (tmp_path / "cache" / "sources" / sf.key).exists()


def test_a_cached_file_that_changed_is_downloaded_again(served, data_dir, tmp_path):
    server = served("diabetis")
    paths = fetch_sources("diabetis", cache_dir=tmp_path / "cache", base_url=server.url)
    paths["uci"].write_text("damaged")
    paths = fetch_sources("diabetis", cache_dir=tmp_path / "cache", base_url=server.url)
    assert sw.sha256(paths["uci"]) == SOURCES["diabetis"]["uci"].sha256
    assert len(server.requests) == 2


def test_missing_file_on_the_server(served, tmp_path):
    server = served("diabetis")
    (server.root / SOURCES["diabetis"]["uci"].key).unlink()
    with pytest.raises(OSError, match="cannot download http://127.0.0.1.*pima-indians"):
        fetch_data(["diabetis"], to=tmp_path / "out", cache_dir=tmp_path / "cache",
                   base_url=server.url, log=lambda m: None)


def test_fetch_input_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown datasets \\['hearts'\\].*usps"):
        fetch_data(["hearts"], to=tmp_path)
    with pytest.raises(ValueError, match="unknown datasets"):
        fetch_data([], to=tmp_path)
    with pytest.raises(ValueError, match="base_url must be an http"):
        fetch_data(["heart"], to=tmp_path, base_url="ftp://example.org/")
    with pytest.raises(ValueError, match="force must be True or False"):
        fetch_data(["heart"], to=tmp_path, force="yes")
    with pytest.raises(ValueError, match="log must be callable"):
        fetch_data(["heart"], to=tmp_path, log="stderr")
    (tmp_path / "a-file").write_text("")
    with pytest.raises(NotADirectoryError, match="a-file exists and is not a folder"):
        fetch_data(["heart"], to=tmp_path / "a-file")
    with pytest.raises(ValueError, match="to must be a folder path"):
        fetch_data(["heart"], to=3)


def test_default_folders(monkeypatch, tmp_path):
    from kpm_reproduce.data import cache_dir, default_data_dir

    monkeypatch.setenv("KPM_CACHE", str(tmp_path / "c"))
    monkeypatch.delenv("KPM_DATA", raising=False)
    assert cache_dir() == tmp_path / "c" and default_data_dir() == tmp_path / "c" / "data"
    monkeypatch.setenv("KPM_DATA", str(tmp_path / "d"))
    assert default_data_dir() == tmp_path / "d"
    monkeypatch.delenv("KPM_CACHE")
    assert cache_dir().name == "kpm"      # the user cache folder of kpm (pooch.os_cache)


# --------------------------------------------------------------------------- the command
def test_kpm_data_fetch_command(served, data_dir, tmp_path, monkeypatch):
    server = served("heart")
    monkeypatch.setenv("KPM_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "mydata"
    res = CliRunner().invoke(app, ["data", "fetch", "--datasets", "heart", "--to", str(out),
                                   "--mirror", server.url])
    assert res.exit_code == 0, res.output
    assert f"export KPM_DATA={out}" in res.output and str(tmp_path / "cache") in res.output
    _same_as_data_files(data_dir, out, ["heart"])
    listing = CliRunner().invoke(app, ["datasets", "--data-dir", str(out)])
    assert listing.exit_code == 0 and "heart" in listing.output
    assert "missing: raetsch/banana.npz" in listing.output
    again = CliRunner().invoke(app, ["data", "fetch", "--datasets", "heart", "--to", str(out),
                                     "--mirror", server.url])
    assert again.exit_code == 0 and "kept" in again.output and len(server.requests) == 40


def test_kpm_data_fetch_errors_are_one_line(served, tmp_path, monkeypatch):
    server = served("diabetis")
    monkeypatch.setenv("KPM_CACHE", str(tmp_path / "cache"))
    (server.root / SOURCES["diabetis"]["uci"].key).write_text("tampered\n")
    res = CliRunner().invoke(app, ["data", "fetch", "--datasets", "diabetis", "--to",
                                   str(tmp_path / "out"), "--mirror", server.url])
    assert res.exit_code == 2 and res.output.count("error:") == 1, res.output
    assert "failed its SHA-256 check" in res.output and "Traceback" not in res.output
    bad = CliRunner().invoke(app, ["data", "fetch", "--datasets", "nope"])
    assert bad.exit_code == 2 and "unknown datasets ['nope']" in bad.output


# --------------------------------------------------------------------------- missing data
def test_empty_data_folder_is_an_error_naming_the_files(tmp_path):
    res = CliRunner().invoke(app, ["datasets", "--data-dir", str(tmp_path)])
    assert res.exit_code == 2, res.output
    assert res.output.count("error:") == 1 and "Traceback" not in res.output
    assert "raetsch/banana.npz" in res.output and "usps/usps.npz" in res.output
    assert f"kpm data fetch --to {tmp_path}" in res.output


def test_loaders_say_where_the_data_come_from(tmp_path):
    with pytest.raises(FileNotFoundError,
                       match=f"heart.npz.*kpm data fetch --datasets heart --to {tmp_path}"):
        ds.load_raetsch("heart", 1, data_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="usps.npz.*kpm data fetch --datasets usps"):
        ds.load_usps(tmp_path)
    with pytest.raises(FileNotFoundError, match="kpm data fetch --to .*nowhere"):
        ds.data_dir(tmp_path / "nowhere")


def test_loaders_find_the_fetched_folder_by_default(tmp_path, monkeypatch):
    monkeypatch.delenv("KPM_DATA", raising=False)
    monkeypatch.setenv("KPM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(ds, "_REPO_DATA", tmp_path / "no-shared-data")
    with pytest.raises(FileNotFoundError, match="`kpm data fetch` downloads the data into "
                                                f"{tmp_path / 'cache' / 'data'}"):
        ds.data_dir()
    (tmp_path / "cache" / "data").mkdir(parents=True)
    assert ds.data_dir() == tmp_path / "cache" / "data"
    monkeypatch.setattr(ds, "_REPO_DATA", tmp_path)         # ../shared/data comes first
    assert ds.data_dir() == tmp_path


# --------------------------------------------------------------------------- real sources
@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("KPM_TEST_REAL_SOURCES") != "1",
                    reason="needs the real source files (KPM_TEST_REAL_SOURCES=1; network or "
                           "a mirror in KPM_DATA_MIRROR)")
def test_real_sources_bit_for_bit(data_dir, tmp_path):
    res = fetch_data(None, to=tmp_path / "out", cache_dir=os.environ.get("KPM_CACHE"),
                     log=lambda m: None)
    for name in SOURCES:
        got, ref = sw.load(res.data_dir, name), sw.load(data_dir, name)
        assert list(got) == list(ref)
        for key in ref:
            assert got[key].dtype == ref[key].dtype and got[key].tobytes() == ref[key].tobytes()
    assert Path(res.data_dir) == tmp_path / "out"
