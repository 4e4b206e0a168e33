"""Look at the built documentation site in a real browser: ``make docs-check``.

Serves ``docs/_build/html`` (built by ``make docs`` or ``make docs FAST=1``) on 127.0.0.1,
opens pages in headless Chromium with a 1280 x 900 window, saves a screenshot of each
(``docs/_build/screens/``, not committed; look at them) and checks what a reader would see:

* the page and every file it asks for come from the local server and load (HTTP status
  below 400; the browser's own request for /favicon.ico aside); the browser resolves no
  other host, so a page that needs the network (MathJax or a font from a CDN, say) fails
  here with the address it asked for;
* no image is broken and no script raised an uncaught exception;
* no raw maths delimiters (``\\(``, ``\\)``, ``\\[``, ``\\]``, ``$$``) are left in the
  visible text outside code;
* on pages with maths: MathJax is loaded, every maths element of the page holds MathJax's
  output (``mjx-container``), none shows a TeX error (``mjx-merror``; undefined macros are
  errors in this site's configuration), MathJax's fonts loaded, and no displayed formula is
  wider than the text column (MathJax 3 does not break lines: the formula would be cut);
* no title is wider than the text column.

Tables wider than the column scroll sideways (the theme's way); each page's line counts them.

The pages checked: the user guide's KPM page, a results page, the results index, the
gallery index and one example, the API page of every public estimator (and of
``select_kernel`` and ``reduce_svc``), and every other page with maths. ``python
docs/check_site.py user_guide/kpm.html ...`` checks the pages named instead. The exit status
is 0 when every check passes, 1 otherwise, with the failures listed under each page.

Needs: Python 3.10 or later (standard library only) and Chromium, found as ``$CHROMIUM``,
``chromium`` or ``chromium-browser`` on the PATH (Debian: ``apt-get install chromium``; it
runs with ``--no-sandbox``, as root needs, and a fresh profile in a temporary folder). The
script drives the browser through the Chrome DevTools protocol over
``--remote-debugging-pipe``, so it needs no browser driver and opens no debugging port.
"""

import argparse
import base64
import fcntl
import functools
import http.server
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

DOCS = Path(__file__).resolve().parent
SITE = DOCS / "_build" / "html"
SCREENS = DOCS / "_build" / "screens"

PAGES = [
    "user_guide/kpm.html",            # the user guide's KPM page (maths)
    "results/braun_table.html",       # a results page (MyST markdown, tables, formulas)
    "results.html",                   # the results index (the reports' titles)
    "auto_examples/index.html",       # the gallery index (thumbnails)
    "auto_examples/plot_kpm_selection_curve.html",  # an example (code, output, figure)
]
# the API pages (numpydoc) of the public estimators and the two functions that fit one
ESTIMATORS = [
    "KernelProjectionMachine", "NystroemKPM", "KernelProjection", "PCAL1", "KernelPCAL1",
    "RelevantDimension", "KernelPCRClassifier", "KernelPCRRegressor", "KernelPCADenoiser",
    "LinearPCADenoiser", "ReducedSetSVC", "select_kernel", "reduce_svc",
]
PAGES += [f"generated/kpm.{name}.html" for name in ESTIMATORS]
WIDTH, HEIGHT = 1280, 900  # CSS pixels of the browser window
PAGE_TIMEOUT = 60.0        # seconds for one page to load and typeset

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-extensions", "--mute-audio",
    # every host but the local server fails to resolve: the site must need no network
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--remote-debugging-pipe",
]

# Runs in the page once it has loaded: waits for MathJax's first typesetting and the fonts,
# loads every image, and returns what the checks need.
PROBE = r"""
(async () => {
  const out = {};
  const maths = [...document.querySelectorAll('.math')];  // Sphinx's maths elements
  out.n_math = maths.length;
  out.mathjax = null;
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
    out.mathjax = MathJax.version;
  }
  out.n_typeset = document.querySelectorAll('mjx-container').length;
  out.untypeset = maths.filter(m => !m.querySelector('mjx-container'))
                       .map(m => m.textContent.trim().slice(0, 100));
  out.tex_errors = [...document.querySelectorAll('mjx-merror')]
                     .map(e => e.getAttribute('data-mjx-error') || e.textContent);
  const cut = e => e.scrollWidth > e.clientWidth + 1;  // wider than its box: cut or scrolled
  out.wide_maths = [...document.querySelectorAll('div.math mjx-container')].filter(cut)
    .map(c => (c.querySelector('mjx-assistive-mml') || c).textContent.slice(0, 80));
  const tables = [...document.querySelectorAll('article table')];
  out.n_tables = tables.length;
  out.wide_tables = tables.filter(t => cut(t.parentElement))
    .map(t => (t.querySelector('th, td') || t).textContent.trim().slice(0, 40));
  out.wide_titles = [...document.querySelectorAll('article h1, article h2, article h3')]
    .filter(cut).map(h => h.textContent.trim().slice(0, 80));
  const broken = [];
  for (const img of document.images) {
    img.loading = 'eager';
    try { await img.decode(); } catch (e) { broken.push(img.currentSrc || img.src); }
  }
  out.broken_images = broken;
  out.n_images = document.images.length;
  await document.fonts.ready;
  out.fonts = [...document.fonts].map(f => [f.family.replace(/"/g, ''), f.status]);
  const skip = 'pre, code, kbd, samp, script, style, textarea, .highlight, mjx-assistive-mml';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode: n => (n.parentElement.closest(skip) || !n.parentElement.checkVisibility())
      ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  const raw = [];
  for (let n; (n = walker.nextNode());) {
    if (/\\[()\[\]]|\$\$/.test(n.data)) raw.push(n.data.trim().slice(0, 120));
  }
  out.raw_delimiters = raw;
  out.title = document.title;
  return out;
})()
"""


class BrowserError(RuntimeError):
    pass


class Chromium:
    """Headless Chromium driven through the DevTools protocol over a pipe (JSON messages
    ended by a NUL byte; the browser reads commands on its fd 3 and answers on its fd 4)."""

    def __init__(self, executable, profile):
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # keep the browser's ends clear of 3 and 4, which the shell sets up for it
        theirs = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5)
                  for fd in (to_browser_r, from_browser_w)]
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)
        cmd = ["sh", "-c", f'exec "$0" "$@" 3<&{theirs[0]} 4>&{theirs[1]}', executable,
               *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"]
        self.proc = subprocess.Popen(cmd, pass_fds=theirs, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for fd in theirs:
            os.close(fd)
        self.w, self.r = to_browser_w, from_browser_r
        self.buffer = b""
        self.events = []
        self.next_id = 0

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except (BrowserError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.w)
        os.close(self.r)

    def _read(self, deadline):
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                raise BrowserError("no answer from Chromium in time")
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace")[-2000:]
                raise BrowserError(f"Chromium exited (status {self.proc.poll()}):\n{err}")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None, timeout=PAGE_TIMEOUT):
        """Send a command; return its result (events that arrive meanwhile are kept)."""
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.w, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            answer = self._read(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error'].get('message')}")
                return answer.get("result", {})
            self.events.append(answer)

    def wait_for(self, method, session, timeout=PAGE_TIMEOUT):
        """The first event ``method`` of the session, waiting for it if need be."""
        deadline = time.monotonic() + timeout
        i = 0
        while True:
            for i in range(i, len(self.events)):
                e = self.events[i]
                if e.get("method") == method and e.get("sessionId") == session:
                    return e
            i = len(self.events)
            try:
                self.events.append(self._read(deadline))
            except BrowserError:
                raise BrowserError(f"no {method} in {timeout:.0f} s") from None


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(root):
    handler = functools.partial(QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def check_page(browser, base, page, screens, max_height):
    """Open ``page``, save its screenshot, return (the list of failures, the probe)."""
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget",
                           {"targetId": target, "flatten": True})["sessionId"]
    try:
        for method in ("Page.enable", "Network.enable", "Runtime.enable"):
            browser.send(method, session=session)
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1,
                      "mobile": False}, session)
        first = len(browser.events)
        url = f"{base}/{page}"
        nav = browser.send("Page.navigate", {"url": url}, session)
        if nav.get("errorText"):
            return [f"cannot open {url}: {nav['errorText']}"], {}
        browser.wait_for("Page.loadEventFired", session)
        probe = browser.send("Runtime.evaluate", {"expression": PROBE, "awaitPromise": True,
                                                  "returnByValue": True}, session)
        if "exceptionDetails" in probe:
            return [f"the page probe failed: {probe['exceptionDetails'].get('text')}"], {}
        info = probe["result"]["value"]
        size = browser.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
        height = min(int(size["height"]), max_height)
        shot = browser.send("Page.captureScreenshot",
                            {"format": "png", "captureBeyondViewport": True,
                             "clip": {"x": 0, "y": 0, "width": WIDTH, "height": height,
                                      "scale": 1}}, session)
        out = screens / (page.replace("/", "__").removesuffix(".html") + ".png")
        out.write_bytes(base64.b64decode(shot["data"]))
        info["screenshot"] = str(out)
        events = [e for e in browser.events[first:] if e.get("sessionId") == session]
    finally:
        browser.send("Target.closeTarget", {"targetId": target})
    return failures(base, info, events), info


def failures(base, info, events):
    """What a reader would find wrong, from the probe and the page's own events."""
    bad = []
    urls = {}
    for e in events:
        p = e.get("params", {})
        if e["method"] == "Network.requestWillBeSent":
            urls[p["requestId"]] = u = p["request"]["url"]
            if not u.startswith((base + "/", "data:", "blob:", "about:")):
                bad.append(f"asks for an outside resource (no network here): {u}")
        elif e["method"] == "Network.responseReceived" and p["response"]["status"] >= 400 \
                and p["response"]["url"] != base + "/favicon.ico":  # the browser's own ask
            bad.append(f"HTTP {p['response']['status']} for {p['response']['url']}")
        elif e["method"] == "Network.loadingFailed" and not p.get("canceled"):
            u = urls.get(p["requestId"], "?")
            if u.startswith(base + "/"):
                bad.append(f"failed to load {u}: {p.get('errorText')}")
        elif e["method"] == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            bad.append("script error: " + d.get("exception", {}).get("description", d["text"])
                       .splitlines()[0])
    bad += [f"broken image {src}" for src in info["broken_images"]]
    bad += [f"raw maths delimiters in the visible text: {t!r}" for t in info["raw_delimiters"]]
    bad += [f"title wider than the page's column (cut off): {t!r}" for t in info["wide_titles"]]
    bad += [f"font {family!r} failed to load" for family, status in info["fonts"]
            if status == "error"]
    if info["n_math"]:
        if info["mathjax"] is None:
            bad.append(f"{info['n_math']} maths elements but MathJax did not load")
        bad += [f"maths not typeset by MathJax: {t!r}" for t in info["untypeset"]]
        bad += [f"TeX error in the maths: {t!r}" for t in info["tex_errors"]]
        bad += [f"display maths wider than the page's column at {WIDTH} px (cut off): {t!r}"
                for t in info["wide_maths"]]
        mjx_fonts = [s for f, s in info["fonts"] if f.startswith(("MJXTEX", "MJXZERO"))]
        if "loaded" not in mjx_fonts:
            states = ", ".join(f"{mjx_fonts.count(s)} {s}" for s in sorted(set(mjx_fonts)))
            bad.append(f"no MathJax font loaded (MathJax's fonts: {states or 'none'})")
    return bad


def print_failures(bad, most=3):
    """Each failure, but at most ``most`` of a kind (the same words before the colon)."""
    kinds = {}
    for line in bad:
        kinds.setdefault(line.split(":")[0], []).append(line)
    for lines in kinds.values():
        for line in lines[:most]:
            print(f"       {line}")
        if len(lines) > most:
            print(f"       ... and {len(lines) - most} more like it")


def pages_with_maths(site):
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                  if 'class="math' in p.read_text(encoding="utf-8", errors="replace"))


def find_chromium():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    sys.exit("error: Chromium not found: install it (Debian: apt-get install chromium) or "
             "set CHROMIUM to its path")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", nargs="*",
                    help="pages to check, relative to the site (default: a fixed set and "
                         "every page with maths)")
    ap.add_argument("--site", type=Path, default=SITE, help="the built site (%(default)s)")
    ap.add_argument("--screens", type=Path, default=SCREENS,
                    help="where the screenshots go (%(default)s)")
    ap.add_argument("--max-height", type=int, default=16000,
                    help="screenshots stop this many CSS pixels down the page")
    args = ap.parse_args(argv)
    if not (args.site / "index.html").is_file():
        sys.exit(f"error: no built site in {args.site}: run `make docs` (or `make docs FAST=1`)")
    pages = args.pages or list(dict.fromkeys(PAGES + pages_with_maths(args.site)))
    missing = [p for p in pages if not (args.site / p).is_file()]
    if missing:
        sys.exit(f"error: not in the built site {args.site}: {', '.join(missing)}")
    args.screens.mkdir(parents=True, exist_ok=True)

    chromium = find_chromium()
    server = serve(args.site)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    n_bad = 0
    with tempfile.TemporaryDirectory(prefix="kpm-docs-chromium-") as profile:
        browser = Chromium(chromium, profile)
        try:
            version = browser.send("Browser.getVersion")["product"]
            print(f"{version}, site {args.site} on {base}, screenshots in {args.screens}")
            for page in pages:
                try:
                    bad, info = check_page(browser, base, page, args.screens, args.max_height)
                except BrowserError as e:
                    bad, info = [f"the browser failed on this page: {e}"], {}
                n_bad += bool(bad)
                maths = (f"{info['n_typeset']}/{info['n_math']} maths typeset by MathJax "
                         f"{info['mathjax']}" if info.get("n_math") else "no maths")
                print(f"{'FAIL' if bad else 'ok  '} {page}: " + (
                    f"{maths}, {info['n_images']} images, {len(info['wide_tables'])} of "
                    f"{info['n_tables']} tables scroll sideways" if info else "not checked"))
                print_failures(bad)
        finally:
            browser.close()
            server.shutdown()
    print(f"{len(pages) - n_bad} of {len(pages)} pages pass" if not n_bad else
          f"error: {n_bad} of {len(pages)} pages fail the checks above")
    return 1 if n_bad else 0


if __name__ == "__main__":
    sys.exit(main())
