"""The build-time picture comes first and fast: index.html preloads every module of the page (the
list written at build from the import graph, tools/site.py) and the snapshot answers the default
view's first picture needs, so no import waterfall and no snapshot fetch waits for the modules. The
default view's main run's answer is preloaded on the default view only (engine/start.js): a page
on another scenario never downloads it."""

import re
from pathlib import Path
from urllib.parse import urlsplit

from support.page import flat_metrics, metrics_match, read_metrics, scenario_from_query, settle
from tools.site import module_graph

WEB = Path(__file__).resolve().parents[2] / "web"

# Records the page's state when <html data-drawn> first appears (init scripts are not subject to
# the CSP), with the resources the document had asked for by then.
FIRST_DRAWN = """
window.__firstDrawn = null;
new MutationObserver(() => {
  const html = document.documentElement;
  if (window.__firstDrawn || !html.hasAttribute('data-drawn')) return;
  window.__firstDrawn = {
    paint: html.dataset.firstPaint, state: html.dataset.state,
    resources: performance.getEntriesByType('resource').map((e) => [new URL(e.name).pathname, e.initiatorType]),
  };
}).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-drawn'] });
"""


def _preloads(html: str, rel: str) -> list[str]:
    return re.findall(rf'<link rel="{rel}"(?: as="fetch" crossorigin)? href="([^"]+)">', html)


def test_every_module_of_web_is_preloaded_or_a_workers(site_dist):
    """A new module of web/ cannot fall out of the list: each is preloaded by index.html, or runs
    only in a worker (the engine's workers, the service worker), which a page preload cannot serve."""
    html = (site_dist / "index.html").read_text()
    preloaded = set(_preloads(html, "modulepreload"))
    assert {"engine/start.js", "main.js", "engine/build.js"} <= preloaded
    assert all((site_dist / m).is_file() for m in preloaded)
    assert not any(m.startswith("vendor/") for m in preloaded), "the lab's editor bundle loads lazily"
    sources = {p.relative_to(WEB).as_posix() for p in WEB.rglob("*.js")}
    worker_entries = set()
    for p in WEB.rglob("*.js"):
        text = p.read_text()
        for ref in re.findall(r"""new\s+(?:Shared)?Worker\(\s*new\s+URL\(\s*['"]([^'"]+)['"]""", text):
            worker_entries.add((p.parent / ref).resolve().relative_to(WEB).as_posix())
        if re.search(r"serviceWorker\.register\(\s*['\"]\./sw\.js['\"]", text):
            worker_entries.add("sw.js")
    assert {"engine/shared.js", "engine/worker.js", "sw.js"} <= worker_entries
    in_workers = set(module_graph(site_dist, sorted(worker_entries)))
    missing = sources - preloaded - in_workers
    assert not missing, f"modules of web/ not in index.html's modulepreload list: {sorted(missing)}"
    assert len(preloaded & sources) > 30


def test_the_first_picture_is_the_snapshot_preloaded_before_the_engine_is_live(strict_page, site_url, native, site_dist):
    html = (site_dist / "index.html").read_text()
    modules = set(_preloads(html, "modulepreload"))
    fetched = set(_preloads(html, "preload"))
    assert "snapshot/index.json" in fetched and len(fetched) >= 3
    page = strict_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.add_init_script(FIRST_DRAWN)
    page.goto(site_url)                         # the real engine starts too: the race is the test
    first = page.wait_for_function("() => window.__firstDrawn").json_value()
    assert first["paint"] == "snapshot" and first["state"] == "snapshot", first
    asked = {path.lstrip("/"): how for path, how in first["resources"]}
    # every module the page had loaded came from a preload, not from an import found on evaluation
    scripts = {p for p in asked if p.endswith(".js")}
    assert scripts and scripts <= modules, sorted(scripts - modules)
    # the snapshot answers were asked by index.html's preloads (the main run's added by
    # engine/start.js, the first module), not after the page's modules evaluated
    answers = {p for p in asked if p.startswith("snapshot/")}
    assert answers and answers <= fetched, sorted(answers - fetched)
    assert all(asked[p] == "link" for p in answers), {p: asked[p] for p in answers}
    page.wait_for_selector("html[data-drawn]:not([data-busy]):not([data-pending])", state="attached")
    assert metrics_match(read_metrics(page), flat_metrics(native.compare({}))) >= 46


# Pages whose main run is not the default view's: a blogger's embed of one figure (the README's
# iframe, answered by the snapshot), a fleet embed (which runs no one-server comparison: figures
# `alone`) and another scenario (asked of the engine).
OTHER_VIEWS = ["?embed=timeline&requests=32&skew=0.8",
               "?embed=fleet&replicas=4&router=llm_d&requests=48&skew=0.8", "?requests=200"]


def test_a_page_on_another_scenario_never_asks_for_the_default_views_answer(strict_page, site_url):
    """The default view's first answer is asked for early, but only by the default view: anywhere
    else it would be ~50 KB downloaded for nothing (and Chromium's "preloaded but not used" warning
    in a blogger's devtools on every view of the post)."""
    page = strict_page
    asked = []
    page.on("request", lambda r: asked.append(urlsplit(r.url).path))
    page.goto(site_url)
    page.wait_for_selector("html[data-drawn]", state="attached")
    default = [p for p in asked if re.search(r"/snapshot/[^/]+-compare\.json$", p)]
    assert len(default) == 1, f"the default view's main run: one answer, asked once; got {default}"
    for query in OTHER_VIEWS:
        assert set(scenario_from_query(query)) - {"cluster"}, f"{query} runs the default scenario"
        asked.clear()
        page.goto(site_url + query)
        settle(page, sweeps=False)
        assert any(p.endswith("/main.js") for p in asked), f"{query}: no request of the page seen"
        assert default[0] not in asked, f"{query}: asked for the default view's answer {default[0]}"


def test_the_graph_follows_imports_not_workers_nor_lazy_files(tmp_path):
    files = {
        "start.js": "import { a } from './a.js';\n// import './commented.js'\nimport('./main.js');",
        "a.js": "export const a = 1; new Worker(new URL('./w.js', import.meta.url));",
        "main.js": "import './ui/b.js'; const cm = () => import('./vendor/big.js');",
        "ui/b.js": "export * from '../a.js';", "w.js": "import './a.js';", "vendor/big.js": "",
        "commented.js": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert module_graph(tmp_path, ["start.js"], lazy={tmp_path / "vendor/big.js"}) == [
        "start.js", "a.js", "main.js", "ui/b.js"]
