"""The page as a lecturer, a blogger and a reader on a phone use it: lecture mode fits the screens
of a room, every embedded figure fits an 820×520 iframe and tells its host its height, the
keyboard works after mouse clicks, story mode walks the article's argument with the native
engine's numbers at each step, the block view shows the vllm run's pool."""

import functools
import http.server
import re
import threading
from pathlib import Path

import pytest

from support.page import (CANVAS_TEXT_RECORDER, canvas_texts, flat_fleet, flat_metrics, fleet_runs,
                          metrics_match, read_metrics, settle, wait_state)




def inside(page, selector):
    """Every element matching selector lies wholly inside the viewport (no scrolling needed)."""
    boxes = page.eval_on_selector_all(selector, """els => els.filter(e => e.offsetParent)
        .map(e => { const r = e.getBoundingClientRect(); return [e.id || e.className, r.left, r.top, r.right, r.bottom]; })""")
    w, h = page.viewport_size["width"], page.viewport_size["height"]
    assert boxes, f"nothing matches {selector}"
    for name, left, top, right, bottom in boxes:
        assert left >= 0 and top >= 0 and right <= w + 0.5 and bottom <= h + 0.5, \
            f"{selector} ({name}) at {left:.0f},{top:.0f}-{right:.0f},{bottom:.0f} leaves the {w}x{h} viewport"
    return len(boxes)


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
@pytest.mark.parametrize("query", ["lecture=1", "lecture=1&vllm=1", "lecture=1&preset=kv_pressure",
                                   "lecture=1&preset=single", "lecture=1&story=5"])
def test_lecture_mode_fits_the_screen(strict_page, site_url, size, query):
    page = strict_page
    page.add_init_script(CANVAS_TEXT_RECORDER)
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{site_url}?{query}")
    settle(page)
    lanes = inside(page, "#timelines canvas.timeline")
    assert lanes == (3 if "vllm" in query or "kv_pressure" in query or "story=5" in query else 2)
    if lanes == 3:
        inside(page, "#timelines canvas.blockview")
    for sel in ("#btn-play", "#scrub", "#playhead-readout", "#play-speed", "#timeline-headline"):
        inside(page, sel)
    # the lanes use what the screen leaves them: canvas text of 20 px and more, rows no thinner
    # than the slot count forces
    drawn = canvas_texts(page, "timeline")
    assert drawn and min(px for _, _, px in drawn) >= 20, sorted(drawn, key=lambda d: d[2])[:3]
    # the static lane is never the last: lecture mode draws the lanes' one pass axis under the
    # last lane, the others keep a 4 px gap under their rows
    rows = page.eval_on_selector('canvas.timeline[data-lane="static"]', "c => c.clientHeight") - 4
    assert rows >= (48 if size[1] >= 1000 or lanes == 2 else 32), rows


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_lecture_type_grows_with_the_screen(strict_page, site_url, size):
    """A room reads a share of the screen: story text at least 2.5 % of the viewport's height, every
    other word of the comparison (lane titles and subtitles, legends, readout, the canvases' text)
    at least 2.2 %, on a laptop and a 1080p projector alike; no exports or footer."""
    page = strict_page
    page.add_init_script(CANVAS_TEXT_RECORDER)
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{site_url}?lecture=1&story=5")
    settle(page)
    h = size[1]
    sizes = lambda sel: page.eval_on_selector_all(   # noqa: E731
        sel, "els => els.filter(e => e.offsetParent).map(e => parseFloat(getComputedStyle(e).fontSize))")
    story = sizes("#story-text")
    assert story and story[0] >= 0.025 * h, f"story text {story} px at {h} px high"
    for sel in (".lane-title", ".lane-title small", ".lane-stats", "#fig-timeline > .legend",
                ".kv-legend", "#playhead-readout"):
        got = sizes(sel)
        assert got and min(got) >= 0.022 * h, f"{sel}: {got} px at {h} px high"
    for cls in ("timeline", "blockview"):
        drawn = canvas_texts(page, cls)
        assert drawn and min(px for _, _, px in drawn) >= 0.022 * h, (cls, sorted(drawn, key=lambda d: d[2])[:3])
    assert not page.is_visible("#fig-export") and not page.is_visible(".footer")
    inside(page, "#timelines canvas")          # and it still fits
    inside(page, ".kv-legend")


def _static_server(directory):
    """A plain static server (another origin, no CSP of ours): the blogger's site."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}"


def test_embeds_fit_an_820_by_520_frame_and_post_their_height(strict_page, site_url, native,
                                                               tmp_path, page_origins):
    page = strict_page
    figures = native("schema", {})["figures"]
    story = native("story", {})
    page.set_viewport_size({"width": 820, "height": 520})
    cases = [f"embed={name}" for name in figures]
    cases += ["embed=timeline&vllm=1", "embed=timeline&preset=kv_pressure", "embed=metrics&vllm=1"]
    cases += [f"embed=story&story={i}" for i in range(1, len(story) + 1)]
    for q in cases:
        page.goto(f"{site_url}?{q}")
        settle(page)
        name = re.match(r"embed=(\w+)", q).group(1)
        doc = page.evaluate("() => document.documentElement.scrollHeight")
        content = page.evaluate("() => Math.ceil(document.body.getBoundingClientRect().bottom)")
        assert doc <= 520, f"{q}: the embed is {doc} px tall in a 520 px frame"
        assert content <= figures[name]["embed_height"], f"{q}: {content} px > its declared height"
        assert page.is_visible("#embed-open") and page.is_visible(f'[data-figure="{name}"]')
        assert page.text_content("#embed-status") == "live engine"   # the quiet progress line
    # The README's listener resizes the host's iframe to the height the page posts: a blog post
    # on another origin (a plain static server) embeds the skew figure.
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    listener = re.search(r"<script>\n(addEventListener\('message'.*?)</script>", readme, re.S).group(1)
    (tmp_path / "listener.js").write_text(listener)
    (tmp_path / "post.html").write_text(
        '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>A blog post</title>'
        '<p>The post.</p>'
        f'<iframe src="{site_url}?embed=skew&amp;seed=4" width="820" height="100" data-cbx-embed'
        ' title="skew"></iframe><script src="listener.js"></script>')
    host = _static_server(tmp_path)
    page_origins.add(host)          # the site was loaded first in this test; the host is new
    page.set_viewport_size({"width": 1000, "height": 800})
    page.goto(f"{host}/post.html")
    embedded = page.frame_locator("iframe")
    embedded.locator("html[data-state=ready]").wait_for(state="attached")
    frame = next(f for f in page.frames if "embed=skew" in f.url)
    settle(frame)
    # the host's iframe ends up exactly as tall as the embedded document
    want = frame.evaluate("() => Math.ceil(document.body.getBoundingClientRect().bottom)")
    page.wait_for_function("h => document.querySelector('iframe').style.height === `${h}px`", arg=want)
    height = page.eval_on_selector("iframe", "f => parseFloat(f.style.height)")
    assert 150 < height <= figures["skew"]["embed_height"], height


def test_keys_work_after_mouse_clicks(strict_page, site_url):
    page = strict_page
    page.goto(site_url)
    settle(page)
    playing = "() => document.getElementById('btn-play').textContent.includes('Pause')"
    # a mouse click on a preset, then Space: the player plays (not the preset again)
    page.click('[data-preset="equal"]')
    settle(page)
    page.keyboard.press("Space")
    page.wait_for_function(playing)
    page.keyboard.press("Space")
    page.wait_for_function(f"() => !({playing[6:]})")
    # a click on the scrubber, then a digit switches presets and Space plays
    page.click("#scrub")
    page.keyboard.press("3")
    page.wait_for_selector('[data-preset="single"][aria-pressed="true"]', state="attached")
    settle(page)
    page.click("#scrub")
    page.keyboard.press("Space")
    page.wait_for_function(playing)
    page.keyboard.press("Space")
    # V toggles the vLLM lane, in lecture mode too (where the checkbox is hidden)
    page.keyboard.press("l")
    page.keyboard.press("v")
    page.wait_for_selector('canvas.timeline[data-lane="vllm"]', state="attached")
    assert "vllm=1" in page.url
    page.keyboard.press("v")
    page.wait_for_selector('canvas.timeline[data-lane="vllm"]', state="detached")
    # every preset says whether it shows the vLLM lane
    tags = page.eval_on_selector_all("[data-preset]", "bs => bs.map(b => [b.dataset.preset, b.dataset.lanes, b.textContent])")
    for name, lanes, text in tags:
        assert ("vllm" in lanes) == ("+ vLLM" in text), (name, lanes, text)
    # the speed control: a run plays in the chosen time, and the link keeps it
    page.select_option("#play-speed", "20")
    assert "speed=20" in page.url


def test_story_mode_walks_every_step_with_native_numbers(strict_page, site_url, native):
    page = strict_page
    story = native("story", {})
    page.goto(site_url)
    settle(page)
    page.keyboard.press("s")
    for i, step in enumerate(story, start=1):
        if i > 1:
            page.keyboard.press("PageDown")
        page.wait_for_selector(f'html[data-story="{i}"]', state="attached")
        settle(page)
        assert f"story={i}" in page.url
        assert page.text_content("#story-title") == step["title"]
        assert page.text_content("#story-count") == f"Step {i} of {len(story)}"
        assert page.is_visible(f'[data-figure="{step["highlight"]}"]')
        if step.get("focus"):
            assert page.eval_on_selector(".story-focus", "e => e.offsetParent !== null")
        # the main figures run one server; the fleet figure the fleet and every router
        one = {k: v for k, v in step["scenario"].items() if k != "cluster"}
        want = flat_metrics(native.compare(one, step["schedulers"]))
        if "cluster" in step["scenario"]:
            assert page.is_visible("canvas.fleet-lane")
            want.update(flat_fleet(*fleet_runs(native, step["scenario"], step["schedulers"][-1])))
        assert metrics_match(read_metrics(page), want) >= 40, step["title"]
        if step["highlight"] == "slots":      # the sizing sweep's advice is the engine's
            sweep = native("sweep", {"scenario": step["scenario"], "param": "slots",
                                     "values": [1, 2, 4, 8, 16, 32, 64, 128],
                                     "schedulers": [step["schedulers"][-1]]})
            rec = sweep["recommendation"][step["schedulers"][-1]]
            assert page.get_attribute("#slots-advice [data-advice]", "data-advice") == str(rec["value"])
            if "recommends" in step["text"]:       # the step that names it names the engine's
                assert f"max_num_seqs = {rec['value']}" in step["text"]
    page.keyboard.press("PageUp")
    page.wait_for_selector(f'html[data-story="{len(story) - 1}"]', state="attached")
    # a change of a control leaves the story; the reader explores from there
    page.click("#story-exit")
    page.wait_for_selector("html:not([data-story])", state="attached")
    assert "story=" not in page.url


# The step's target is on screen under the story card: all of the part it points at (a lane, the
# block view with its legend), or the figure from its top (all of it when it fits).
_SHOWN = """({sel, whole}) => {
  const t = document.querySelector(sel);
  if (!t || !t.offsetParent) return false;
  const r = t.getBoundingClientRect(), card = document.getElementById('fig-story').getBoundingClientRect();
  const top = Math.max(0, card.bottom) - 1, fits = r.bottom <= innerHeight + 1;
  return r.top >= top && (whole ? fits : fits || r.top <= top + 60);
}"""


def test_story_steps_show_what_they_point_at(strict_page, site_url, native):
    page = strict_page
    story = native("story", {})
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(site_url)
    settle(page)
    page.keyboard.press("s")
    for i, step in enumerate(story, start=1):
        if i > 1:
            page.keyboard.press("PageDown")
        page.wait_for_selector(f'html[data-story="{i}"]', state="attached")
        settle(page)
        focus = step.get("focus")
        if focus == "blocks":      # the block view and its own legend, not the lanes'
            assert page.eval_on_selector(".story-focus", "e => e.matches('.kv-view') && !!e.querySelector('canvas.blockview') && !!e.querySelector('.kv-legend')")
        target = ".story-focus" if focus else f'[data-figure="{step["highlight"]}"]'
        try:
            page.wait_for_function(_SHOWN, arg={"sel": target, "whole": bool(focus)}, timeout=15_000)
        except Exception:
            box = page.eval_on_selector(target, "e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; }")
            raise AssertionError(f"step {i} ({step['title']}): {target} at {box} is not shown in 1366x768")


def test_block_view_under_the_vllm_lane(strict_page, site_url, native):
    page = strict_page
    page.add_init_script(CANVAS_TEXT_RECORDER)
    page.goto(f"{site_url}?preset=kv_pressure")
    settle(page)
    assert page.is_visible('canvas.blockview[data-blocks="vllm"]')
    run = native.compare({"scheduler": "vllm", "server": {"kv_tokens": 3000}},
                         ["static", "continuous", "vllm"])["vllm"]
    want = run["kv_blocks"]
    # its own legend (dots for a free block still caching a prefix, never the lanes' padding hatch),
    # naming what this run shows
    legend = page.locator('[data-legend="blocks"]')
    assert legend.is_visible()
    words = legend.inner_text()
    assert "a request's blocks" in words and "pool size" in words
    assert ("preempted" in words) == (run["metrics"]["preemptions"] > 0) and run["metrics"]["preemptions"] > 0
    assert ("free, still caching a prefix" in words) == any(want["samples"]["cached_free"])
    keys = page.eval_on_selector_all('[data-legend="blocks"] .key', "ks => ks.map(k => k.className)")
    assert keys and not any("key-padding" in k for k in keys), keys
    # an axis in blocks, and the title's numbers with their units
    drawn = {text for _, text, _ in canvas_texts(page, "blockview")}
    total, peak = want["total"], max(want["samples"]["used"])
    assert {"0", f"{total:,}", "blocks"} <= drawn, drawn
    title = (f"KV pool: {total:,} blocks of {want['block_size']} tokens · peak {peak:,} blocks in use"
             f" · ▲ {run['metrics']['preemptions']:,} preemptions")
    assert any(d.startswith(title) for d in drawn), drawn     # then the prefix-cache hits, if any
    page.locator("canvas.blockview").scroll_into_view_if_needed()
    box = page.eval_on_selector("canvas.blockview", "c => { const r = c.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }")
    # hovering the pool at a sampled pass names the blocks in use there, as the engine sampled them
    passes = page.eval_on_selector('canvas.timeline[data-lane="vllm"]', "c => c.clientWidth")
    assert passes > 100
    page.mouse.move(box[0] + box[2] * 0.1, box[1] + box[3] - 20)
    page.wait_for_selector("#tooltip:not([hidden])")
    text = page.inner_text("#tooltip")
    m = re.search(r"pass ([\d,]+).*?\n([\d,]+) of ([\d,]+) blocks in use", text, re.S)
    assert m, text
    p, used, total = (int(g.replace(",", "")) for g in m.groups())
    assert total == want["total"]
    i = max(k for k, q in enumerate(want["samples"]["pass"]) if q <= p)
    assert used == want["samples"]["used"][i]
