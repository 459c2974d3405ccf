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

from support.page import (CANVAS_TEXT_RECORDER, CHART_TEXT_RECORDER, canvas_texts, chart_boxes,
                          flat_fleet, flat_metrics, fleet_runs, metrics_match, read_metrics, settle,
                          wait_state)




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
def test_lecture_mode_fits_the_fleet_steps(strict_page, site_url, native, size):
    """The story's fleet steps in lecture mode: the card, the fleet's numbers, every replica's lane
    and the router's decisions on one screen, without scrolling; the router comparison too on the
    step about it (and only there)."""
    page = strict_page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    story = native("story", {})
    steps = [i for i, s in enumerate(story, 1) if s["highlight"] == "fleet"]
    assert steps and any(story[i - 1].get("focus") == "routers" for i in steps)
    for i in steps:
        page.goto(f"{site_url}?lecture=1&story={i}")
        settle(page)
        page.wait_for_selector("#fleet-lanes canvas", state="attached")
        settle(page)
        assert page.evaluate("() => document.documentElement.scrollHeight") <= size[1], f"story={i}"
        for sel in ("#fleet-numbers", "#fleet-lanes canvas", "#fleet-decisions", "#fig-story"):
            inside(page, sel)
        if story[i - 1].get("focus") == "routers":
            page.wait_for_selector("#fleet-routers tbody tr >> nth=7", state="attached")
            assert inside(page, "#fleet-routers tbody tr") == 8, f"story={i}"
            inside(page, "#fleet-routers .fleet-compare")
        else:
            assert not page.is_visible("#fig-fleet .fleet-right"), f"story={i}"


def test_on_a_phone_a_story_step_opens_on_its_text_and_its_nav_stays_in_reach(strict_page, site_url):
    """On a phone the card scrolls with the page: a step scrolled to the part it points at put
    the step's text (and its Next) above the screen. Now the card comes first, the step's figure
    after it, and Previous / Next sit at the bottom of the screen wherever the reader scrolls."""
    page = strict_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{site_url}?story=11")
    settle(page)
    page.click("#story-next")
    page.wait_for_selector('html[data-story="12"]', state="attached")
    settle(page)
    on_top = """() => { const r = document.getElementById('fig-story').getBoundingClientRect();
                        return r.top >= 0 && r.top <= 20; }"""
    page.wait_for_function(on_top)
    inside(page, "#story-title")
    for where in ("0", "document.body.scrollHeight"):
        page.evaluate(f"() => window.scrollTo(0, {where})")
        for sel in ("#story-prev", "#story-next"):
            inside(page, sel)
    assert not page.is_visible(".story-keys")        # no PageDown on a phone
    page.click("#story-prev")
    page.wait_for_selector('html[data-story="11"]', state="attached")
    page.wait_for_function(on_top)



@pytest.mark.parametrize("size", [(390, 844), (1366, 768)])
def test_story_mode_shows_its_card_and_step_figure_only(strict_page, site_url, size):
    """Story mode hid every other figure but not Share and export nor the footer: on a phone they
    followed each step's figure. Now it shows the card and the step's figure only, on a phone as on a
    larger screen; outside story mode both are there."""
    page = strict_page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{site_url}?story=5")
    settle(page, sweeps=False)
    assert page.is_visible("#fig-story") and page.is_visible('[data-figure="timeline"]')
    shown = page.eval_on_selector_all("main .figure, .footer", "es => es.filter(e => e.offsetParent).map(e => e.id || e.className)")
    assert shown == ["fig-story", "fig-timeline"], shown
    page.click("#story-exit")
    page.wait_for_selector("html:not([data-story])", state="attached")
    settle(page, sweeps=False)
    assert page.is_visible("#fig-export") and page.is_visible(".footer")


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_lecture_mode_fits_every_story_step(strict_page, site_url, native, size):
    """A lecturer pages through the whole story on a projector: no step scrolls (the sizing
    steps' advice under the chart ran 47 px past 1366x768)."""
    page = strict_page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    for i, step in story_steps(page, site_url, native("story", {}), "lecture=1"):
        assert page.evaluate("() => document.documentElement.scrollHeight") <= size[1], \
            f"step {i} ({step['title']}) scrolls in lecture mode at {size}"
        inside(page, "#fig-story")


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


# States that make a figure taller than its default: a vLLM lane, a fleet of 8, prefill/decode
# pools, the planner's table (tests/browser/test_fleet.py and test_disagg.py use the same ones).
FLEET = ("vllm=1&requests=120&arrival=poisson&rate=10&output_mean=48&prefix=system&groups=4"
         "&tokens=1500&kv_tokens=6000&replicas=8&router=llm_d&w_kv=0.5")
PD = ("vllm=1&requests=60&arrival=poisson&rate=8&prompt_mean=1500&output_mean=64"
      "&prefill_replicas=1&decode_replicas=2&link_gb_s=10")
PLAN = ("cost=roofline&vllm=1&requests=60&arrival=poisson&rate=6&prompt_mean=2000"
        "&output_mean=150&skew=0.2&kv_tokens=auto&slots=64&max_num_batched_tokens=8192"
        "&ttft_ms=1500&tpot_ms=35")
LINE = 24     # px: a figure reserves at most a line more than its tallest state
# figures that go on after settle: the papers' checks, the planner on a roofline deployment
DONE = {"embed=papers": "#papers-grid[data-done]", f"embed=plan&{PLAN}": "#plan-reason-text"}

def open_embed(page, site_url, q):
    """Open the embed at ?q and wait for its figure to be done (DONE: those that go on)."""
    page.goto(f"{site_url}?{q}")
    settle(page)
    if q in DONE:
        page.wait_for_selector(DONE[q], state="attached", timeout=240_000)
        settle(page)


_HEIGHTS = """() => { const b = document.body, r = Math.ceil(b.getBoundingClientRect().bottom);
  b.style.minHeight = '0px'; const natural = Math.ceil(b.getBoundingClientRect().bottom);
  b.style.minHeight = ''; return [r, natural, document.documentElement.scrollHeight]; }"""


def test_embeds_render_at_their_snippet_height_in_every_state(strict_page, site_url, native):
    """Each embed is exactly as tall as its snippet (embed_height, within 2 px) in every state tried,
    fits 520, and the height it reserves is its tallest state's (not padding)."""
    page = strict_page
    figures = native("schema", {})["figures"]
    story = native("story", {})
    page.set_viewport_size({"width": 820, "height": 520})
    cases = [f"embed={name}" for name in figures]
    cases += ["embed=timeline&vllm=1", "embed=timeline&preset=kv_pressure", "embed=metrics&vllm=1",
              "embed=slots&vllm=1", f"embed=fleet&{FLEET}", f"embed=fleet&{PD}", f"embed=plan&{PLAN}"]
    cases += [f"embed=story&story={i}" for i in range(1, len(story) + 1)]
    tallest = {}

    def measure(q):
        name = re.match(r"embed=(\w+)", q).group(1)
        rendered, natural, doc = page.evaluate(_HEIGHTS)
        want = figures[name]["embed_height"]
        assert doc <= 520, f"{q}: the embed is {doc} px tall in a 520 px frame"
        assert abs(rendered - want) <= 2, f"{q}: renders {rendered} px, its snippet says {want}"
        assert natural <= want, f"{q}: its content is {natural} px, more than the {want} it reserves"
        tallest[name] = max(tallest.get(name, 0), natural)
        assert page.is_visible("#embed-open") and page.is_visible(f'[data-figure="{name}"]')
        assert page.text_content("#embed-status") == "live engine"   # the quiet progress line

    for q in cases:
        open_embed(page, site_url, q)
        measure(q)
    # the calculator's own form: a GPU picked adds the roofline's pass times
    page.goto(f"{site_url}?embed=kv")
    settle(page)
    page.select_option("#kv-gpu", "h100-80gb")
    page.wait_for_selector("[data-stat='roofline.decode_1_ms']", state="attached")
    settle(page)
    measure("embed=kv&gpu=h100")
    loose = {n: (figures[n]["embed_height"], h) for n, h in tallest.items()
             if n != "lab" and figures[n]["embed_height"] - h > LINE}
    # the lab embed reserves the open editor's height (it opens on a click, not from a URL)
    assert not loose, f"reserved (px) vs the tallest state seen: {loose}"


@pytest.mark.parametrize("size", [(1366, 768), (390, 844)])
def test_vllm_flag_names_in_the_controls_break_between_words_only(strict_page, site_url, size):
    """A serving engineer copies the flag names: "(gpu_memory_utilizat|ion)" broke mid-word in the
    narrow controls column. Each part between underscores now stays on one line."""
    page = strict_page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{site_url}?cost=roofline&vllm=1")
    settle(page, sweeps=False)
    if size[0] < 500:
        page.click("#btn-controls")
        page.wait_for_selector("html[data-drawer=open]", state="attached")
    split = page.eval_on_selector_all(".field label .flag-name", """ns => ns.filter(n => n.offsetParent)
        .flatMap(n => [...n.childNodes].filter(t => t.nodeType === 3).map(t => {
          const r = document.createRange(); r.selectNodeContents(t);
          return [n.textContent, t.textContent, new Set([...r.getClientRects()].map(b => Math.round(b.top))).size]; }))""")
    names = {name for name, _, _ in split}
    assert {"(gpu_memory_utilization)", "(long_prefill_token_threshold)", "(max_num_seqs)"} <= names, names
    broken = [(name, part) for name, part, lines in split if lines != 1]
    assert not broken, broken


def test_the_headline_starts_with_a_capital_without_its_lead(strict_page, site_url):
    """Lecture mode and an embed hide the headline's lead ("Same requests, same GPU: "): it read
    "continuous batching is ×3.23 faster", lower case on a projector."""
    page = strict_page
    for query, lead in (("", True), ("lecture=1", False), ("embed=timeline", False)):
        page.goto(f"{site_url}?{query}")
        settle(page, sweeps=False)
        text = page.inner_text("#timeline-headline .headline-main")
        want = "Same requests, same GPU: continuous batching is" if lead else "Continuous batching is"
        assert text.startswith(want), (query, text)


_CONTRAST = """(sel) => {
  const e = document.querySelector(sel), rgb = (c) => c.match(/[\\d.]+/g).map(Number);
  const [r, g, b] = rgb(getComputedStyle(e).color), a = Number(getComputedStyle(e).opacity);
  const bg = rgb(getComputedStyle(e.closest('button')).backgroundColor);
  const lum = (c) => { const [x, y, z] = c.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * x + 0.7152 * y + 0.0722 * z; };
  const fg = [r, g, b].map((v, i) => a * v + (1 - a) * bg[i]);
  const [hi, lo] = [lum(fg), lum(bg)].sort((p, q) => q - p);
  return (hi + 0.05) / (lo + 0.05); }"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_pressed_presets_key_number_is_legible(strict_page, site_url, theme):
    """The pressed preset's key number ("1") was faded on the accent: 3.6:1 in the light theme."""
    page = strict_page
    page.goto(f"{site_url}?lecture=1&theme={theme}")
    settle(page, sweeps=False)
    ratio = page.evaluate(_CONTRAST, '#preset-buttons button[aria-pressed="true"] kbd')
    assert ratio >= 4.5, ratio


def test_a_keyboard_focused_summary_and_scroll_box_show_the_pages_focus_ring(strict_page, site_url):
    """Buttons and fields had the page's 2 px ring; a <details> summary and the sizing table's
    scroll box only the browser's default 1 px one."""
    page = strict_page
    page.goto(f"{site_url}?vllm=1")
    settle(page)
    for sel in ("#calibrate summary", ".table-scroll"):
        page.focus(sel)
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Tab")
        ring = page.eval_on_selector(sel, """e => e === document.activeElement && e.matches(':focus-visible')
            && [getComputedStyle(e).outlineStyle, getComputedStyle(e).outlineWidth]""")
        assert ring == ["solid", "2px"], (sel, ring)


def test_every_hint_in_the_controls_reads_alike(strict_page, site_url):
    """The trace file's hint sat outside a field and took the body text's size and colour (15 px,
    ink) among the fields' 10.8 px muted hints."""
    page = strict_page
    page.goto(site_url)
    settle(page, sweeps=False)
    looks = page.evaluate("""() => [...document.querySelectorAll('.controls .hint')].filter((h) => h.offsetParent)
        .map((h) => `${getComputedStyle(h).fontSize} ${getComputedStyle(h).color}`)""")
    assert len(looks) > 5 and len(set(looks)) == 1, sorted(set(looks))


def test_no_embed_scrolls_sideways_on_a_phone(strict_page, site_url, native):
    """A blog read on a phone narrows each iframe to the column: at 390 px the papers' five tile
    columns, the lab's editor beside its scores and the planner's table (its width set the whole
    figure's: the layout's auto margins) ran 23-90 px past the right edge."""
    page = strict_page
    figures = native("schema", {})["figures"]
    page.set_viewport_size({"width": 390, "height": 844})
    cases = [f"embed={name}" for name in figures] + [f"embed=plan&{PLAN}", "embed=lab&scheduler=custom"]
    wide = {}
    for q in cases:
        open_embed(page, site_url, q)
        doc, view = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        if doc > view:
            wide[q] = doc
    assert not wide, f"wider than the 390 px screen: {wide}"


def _blog_post(page, site_url, native, tmp_path, page_origins):
    """A blog post pasting the copied story and skew snippets, the skew one 3,000 px down (off
    screen); returns (figures, story frame, skew frame), both settled."""
    figures = native("schema", {})["figures"]
    page.goto(f"{site_url}?requests=24")
    settle(page, sweeps=False)
    snippets = {}
    for name in ("story", "skew"):
        page.select_option("#embed-figure", name)
        page.click("#btn-copy-embed")
        snippets[name] = page.input_value("#share-text")
    listener = re.search(r"<script>\n(.*?)\n</script>", snippets["skew"], re.S).group(1)
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert listener in readme, "the README shows the snippet's listener"
    assert snippets["story"].count("<script>") == 1 and "cbx:measure" in listener
    frames = [re.search(r"<iframe .*?</iframe>", snippets[n]).group(0).replace(' loading="lazy"', "")
              for n in ("story", "skew")]
    (tmp_path / "post.html").write_text(
        '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>A blog post</title>'
        '<script>window.heights = []; addEventListener("message", (e) => { if (e.data?.type === "cbx:height")'
        ' heights.push([e.data.figure, e.data.height]); });</script>'
        f'<p>The post.</p>{frames[0]}<div style="height:3000px">More of the post.</div>{frames[1]}'
        + snippets["skew"][snippets["skew"].index("<!--"):])
    host = _static_server(tmp_path)
    page_origins.add(host)          # the site was loaded first in this test; the host is new
    page.set_viewport_size({"width": 1000, "height": 800})
    page.goto(f"{host}/post.html")
    story = next(f for f in page.frames if "embed=story" in f.url)
    skew = next(f for f in page.frames if "embed=skew" in f.url)
    for frame in (story, skew):
        frame.wait_for_selector("html[data-state=ready]", state="attached", timeout=90_000)
        settle(frame, polling=100)   # the skew frame is off screen: no animation frames
    return figures, story, skew


def test_the_copied_snippet_is_the_rendered_height_and_an_off_screen_frame_follows_the_host(
        strict_page, site_url, native, tmp_path, page_origins):
    """Every height the embeds post while they load is the snippet's own; after the host narrows
    its column, the frame far off screen is resized to its new height too (it answers cbx:measure)."""
    page = strict_page
    figures, story, skew = _blog_post(page, site_url, native, tmp_path, page_origins)
    posted = page.evaluate("() => heights")
    assert posted and all(h == figures[n]["embed_height"] for n, h in posted), posted
    # a narrower column: the skew figure far below (never scrolled to) grows, and its iframe with it
    page.set_viewport_size({"width": 460, "height": 800})
    page.wait_for_function("() => heights.some(([n, h]) => n === 'skew' && h > %d)" % figures["skew"]["embed_height"],
                           polling=100)
    want = skew.evaluate("() => Math.ceil(document.body.getBoundingClientRect().bottom)")
    assert want > figures["skew"]["embed_height"]
    page.wait_for_function("h => document.querySelectorAll('iframe')[1].style.height === `${h}px`", arg=want)


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


def story_steps(page, site_url, story, query=""):
    """Open the page (with `query`), enter story mode ("s") and step through it with PageDown:
    yields (i, step) once step i is shown and settled."""
    page.goto(f"{site_url}?{query}" if query else site_url)
    settle(page)
    page.keyboard.press("s")
    for i, step in enumerate(story, start=1):
        if i > 1:
            page.keyboard.press("PageDown")
        page.wait_for_selector(f'html[data-story="{i}"]', state="attached")
        settle(page)
        yield i, step


def test_story_mode_walks_every_step_with_native_numbers(strict_page, site_url, native):
    page = strict_page
    story = native("story", {})
    for i, step in story_steps(page, site_url, story):
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
    for i, step in story_steps(page, site_url, story):
        focus = step.get("focus")
        if focus == "blocks":      # the block view and its own legend, not the lanes'
            assert page.eval_on_selector(".story-focus", "e => e.matches('.kv-view') && !!e.querySelector('canvas.blockview') && !!e.querySelector('.kv-legend')")
        target = ".story-focus" if focus else f'[data-figure="{step["highlight"]}"]'
        try:
            page.wait_for_function(_SHOWN, arg={"sel": target, "whole": bool(focus)}, timeout=15_000)
        except Exception:
            box = page.eval_on_selector(target, "e => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; }")
            raise AssertionError(f"step {i} ({step['title']}): {target} at {box} is not shown in 1366x768")


def test_the_story_embed_keeps_its_height_on_every_step(strict_page, site_url, native, tmp_path, page_origins):
    page = strict_page
    figures, story, skew = _blog_post(page, site_url, native, tmp_path, page_origins)
    # the story steps in its frame: the host's iframe keeps its height at every step
    for _ in range(4):
        before = story.evaluate("() => document.documentElement.dataset.drawn")
        story.click("#story-next")
        story.wait_for_function("d => document.documentElement.dataset.drawn !== d", arg=before)
        settle(story)
        assert page.eval_on_selector("iframe", "f => f.getBoundingClientRect().height") == figures["story"]["embed_height"]
    posted = page.evaluate("() => heights")
    assert posted and all(h == figures[n]["embed_height"] for n, h in posted), posted


def test_the_timeline_fits_the_first_screen_at_1366_by_768(strict_page, site_url):
    """A laptop: the lanes, their legend and Play all on the first screen, no scrolling."""
    page = strict_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(site_url)
    settle(page, sweeps=False)
    for sel in ("#timeline-headline", "#timelines canvas.timeline", "#fig-timeline .legend", "#btn-play", "#scrub"):
        inside(page, sel)
    rows = page.eval_on_selector('canvas.timeline[data-lane="static"]', "c => c.clientHeight")
    assert rows >= 96, rows          # fitting never squeezes 8 slots below 12 px each


@pytest.mark.parametrize("query", ["", "vllm=1"])
def test_on_a_phone_the_lanes_fit_one_screen_and_the_drawer_leaves_the_result(strict_page, site_url, query):
    page = strict_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{site_url}?{query}")
    settle(page, sweeps=False)
    # scrolled to the figure: its headline and every lane with its axis above the bar
    page.evaluate("() => document.getElementById('timeline-headline').scrollIntoView({ block: 'start' })")
    bar = page.eval_on_selector(".phone-bar", "b => b.getBoundingClientRect().top")
    top = page.eval_on_selector("#timeline-headline", "h => h.getBoundingClientRect().top")
    bottom = max(page.eval_on_selector_all("#timelines canvas", "cs => cs.map(c => c.getBoundingClientRect().bottom)"))
    assert top >= 0 and bottom <= bar, (top, bottom, bar)
    # the drawer opened from the top of the page: the result (the headline) stays in view above it
    page.evaluate("() => scrollTo(0, 0)")
    page.click("#btn-controls")
    page.wait_for_selector("html[data-drawer=open]", state="attached")
    page.wait_for_function("() => getComputedStyle(document.getElementById('controls')).transform === 'none'")
    drawer = page.eval_on_selector("#controls", "c => c.getBoundingClientRect().top")
    head = page.eval_on_selector("#timeline-headline", "h => { const r = h.getBoundingClientRect(); return [r.top, r.bottom]; }")
    assert head[0] >= 0 and head[1] <= drawer, (head, drawer)
    # a change made in the drawer shows above it
    before = page.text_content("#hl-speedup")
    page.fill("#ctl-skew", "0")
    page.press("#ctl-skew", "Enter")
    page.wait_for_function("b => document.getElementById('hl-speedup').textContent !== b", arg=before)
    assert page.eval_on_selector("#timeline-headline", "h => h.getBoundingClientRect().bottom") <= drawer


def test_on_a_phone_the_vllm_checkbox_is_a_44_px_target(strict_page, site_url):
    page = strict_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(site_url)
    settle(page, sweeps=False)
    page.click("#btn-controls")
    page.wait_for_selector("html[data-drawer=open]", state="attached")
    page.wait_for_function("() => getComputedStyle(document.getElementById('controls')).transform === 'none'")
    box = page.locator("#lane-toggles input[type=checkbox]").first
    box.scroll_into_view_if_needed()
    b = box.bounding_box()
    assert b["width"] >= 28 and b["height"] >= 28, b        # the box itself is not squeezed
    cx, cy = b["x"] + b["width"] / 2, b["y"] + b["height"] / 2
    # every point of the 44x44 square around it toggles it (the box or its label)
    misses = page.evaluate("""([cx, cy]) => { const box = document.querySelector('#lane-toggles input'); const out = [];
        for (let dx = -22; dx <= 22; dx += 11) for (let dy = -22; dy <= 22; dy += 11) {
          const e = document.elementFromPoint(cx + dx, cy + dy);
          if (!(e === box || (e && e.closest('label') === box.closest('label')))) out.push([dx, dy, e && e.tagName]); }
        return out; }""", [cx, cy])
    assert not misses, misses
    page.mouse.click(cx + 21, cy + 21)
    page.wait_for_selector('canvas.timeline[data-lane="vllm"]', state="attached")


def test_on_a_phone_the_sizing_legends_do_not_overprint(strict_page, site_url):
    page = strict_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{site_url}?vllm=1")
    settle(page)
    for chart in ("#chart-slots", "#chart-slots-latency", "#chart-skew"):
        items, (plot_top, right) = page.eval_on_selector(chart, "c => JSON.parse(c.dataset.legend)")
        assert items, chart
        for i, (x, y, w) in enumerate(items):
            assert x + w <= right + 1 or x <= 70, (chart, items[i], right)   # a line's first entry may be wide
            assert y + 11 <= plot_top, (chart, items[i], plot_top)
            for x2, y2, w2 in items[i + 1:]:
                assert y2 != y or x2 >= x + w, (chart, (x, y, w), (x2, y2, w2))


def drawn_charts(page, site_url, query):
    """The page at 1366x768 with ?query, settled, recording its charts' texts (chart_boxes)."""
    page.add_init_script(CHART_TEXT_RECORDER)
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{site_url}?{query}")
    settle(page)


def test_the_sizing_chart_says_within_the_slo_once(strict_page, site_url):
    """The legend named the share's line "within the SLO" and the right axis said it again: the
    axis now says what it measures (a share of the requests), the legend what that share is."""
    page = strict_page
    drawn_charts(page, site_url, "vllm=1")
    texts = [t for t, *_ in chart_boxes(page, "chart-slots")]
    assert "throughput (tok/s)" in texts and "100%" in texts, texts       # the chart was drawn
    assert [t for t in texts if "within the SLO" in t] == ["within the SLO"], texts
    assert "% of requests" in texts, texts


def test_the_skew_charts_value_at_skew_0_stays_off_the_axis_labels(strict_page, site_url):
    """Story step 3 (skew 0) labels the point at the chart's left end "×1.00": centred above it,
    its left half ran over the y axis's tick labels. It keeps inside the plot now."""
    page = strict_page
    drawn_charts(page, site_url, "story=3")
    boxes = chart_boxes(page, "chart-skew")
    ticks = [right for text, _, right, _ in boxes if re.fullmatch(r"×\d+\.\d", text)]
    value = [left for text, left, _, _ in boxes if text == "×1.00"]
    assert ticks and value, boxes
    assert value[0] > max(ticks), (value, max(ticks))


def test_reduced_motion_plays_in_tenths_and_nothing_moves_by_itself(strict_page, site_url):
    """prefers-reduced-motion: the playhead jumps a tenth of the run at a time (player.js), no
    CSS transition or animation runs; held to it here (it was untested)."""
    page = strict_page
    page.emulate_media(reduced_motion="reduce")
    page.goto(site_url)
    settle(page)
    pm = int(page.get_attribute("#scrub", "max"))
    assert pm >= 10
    assert page.evaluate("() => getComputedStyle(document.getElementById('btn-play'))"
                         ".transitionDuration.split(',').every(d => parseFloat(d) === 0)")
    # every value the playhead takes, frame by frame, until the play ends
    page.evaluate("""() => { window.__seen = new Set();
      const look = () => { window.__seen.add(Number(document.getElementById('scrub').value));
        if (!window.__stopLooking) requestAnimationFrame(look); };
      look(); }""")
    page.click("#btn-play")
    page.wait_for_function("() => document.getElementById('btn-play').textContent.includes('Pause')")
    page.wait_for_function("() => !document.getElementById('btn-play').textContent.includes('Pause')",
                           timeout=60_000)
    seen = sorted(page.evaluate("() => { window.__stopLooking = true; return [...window.__seen]; }"))
    tenths = {round(k * pm / 10) for k in range(11)}
    assert set(seen) - {pm} <= tenths and len(seen) <= 12, (pm, seen)
