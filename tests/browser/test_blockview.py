"""The vllm lane's block view (draw/blocks.js): the pool over the run as the engine sampled it,
its legend and title (preemptions, prefix-cache hits, shared blocks), and its title's room at
every size a reader has."""

import re

import pytest

from support.page import CANVAS_TEXT_RECORDER, canvas_texts, settle


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


def test_block_view_marks_the_prefix_cache_hits(strict_page, site_url, native):
    """A system prompt shared by every request: the block view counts the admissions that hit
    the prefix cache (● in its title and legend) and the shared blocks, as the engine's result
    says (it was drawn, never tested)."""
    page = strict_page
    page.add_init_script(CANVAS_TEXT_RECORDER)
    page.goto(f"{site_url}?vllm=1&prefix=system&tokens=512&groups=2&kv_tokens=20000")
    settle(page)
    scenario = {"workload": {"prefix": {"kind": "system", "tokens": 512, "groups": 2}},
                "server": {"kv_tokens": 20000}}
    run = native.compare(scenario, ["static", "continuous", "vllm"])["vllm"]
    hits = sum(1 for q in run["requests"] if q["cached_tokens"] > 0)
    assert hits > 0
    drawn = {text for _, text, _ in canvas_texts(page, "blockview")}
    assert any(d.endswith(f"● {hits:,} prefix-cache hits") for d in drawn), drawn
    words = page.inner_text('[data-legend="blocks"]')
    assert "prefix-cache hit" in words
    # blocks in the requests' tables beyond those in use: shared prefix blocks (blocks.js)
    kb, k, shared = run["kv_blocks"], 0, False
    for used, n in zip(kb["samples"]["used"], kb["samples"]["holders"]):
        shared |= sum(kb["holders"]["blocks"][k:k + n]) > used
        k += n
    assert shared and "blocks in use (shared prefixes)" in words


# Where each text on the block view ends, in the canvas's own pixels (its transform applied).
_TEXT_EDGES = """
window.__cbxTextEdges = [];
const fillText0 = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (text, x, y, ...rest) {
  const c = this.canvas;
  if (c && c.classList && c.classList.contains('blockview') && this.textAlign === 'left') {
    const m = this.getTransform();
    window.__cbxTextEdges.push([String(text), m.a * (x + this.measureText(text).width) + m.e, c.width]);
  }
  return fillText0.call(this, text, x, y, ...rest);
};
"""


def test_the_block_views_title_fits_a_phone(strict_page, site_url):
    """At 390 px the pool's title ran past the canvas's right edge ("... blocks in use ·"): it now
    keeps the parts that fit, the pool's size first."""
    page = strict_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.add_init_script(_TEXT_EDGES)
    page.goto(f"{site_url}?preset=kv_pressure")
    settle(page)
    page.wait_for_function("() => window.__cbxTextEdges.some(([t]) => t.startsWith('KV pool:'))")
    titles = page.evaluate("() => window.__cbxTextEdges.filter(([t]) => t.startsWith('KV pool:'))")
    for text, right, width in titles:
        assert right <= width, f"{text!r} ends at {right:.0f} of {width} px"
    assert all(re.match(r"KV pool: [\d,]+ blocks of 16 tokens", t) for t, _, _ in titles), titles



# The story's steps on a full pool (a run that fills the pass axis leaves no room beside it), at
# the sizes readers use: a laptop, a 1080p screen, lecture mode, an 820x520 embed, a phone.
@pytest.mark.parametrize("query,size", [
    ("story=5", (1366, 768)), ("story=6", (1366, 768)), ("story=5", (1920, 1080)),
    ("lecture=1&story=5", (1366, 768)), ("lecture=1&story=5", (1920, 1080)),
    ("embed=story&story=5", (820, 520)), ("embed=story&story=6", (820, 520)), ("story=5", (390, 844)),
    ("story=6", (390, 844))])
def test_the_block_views_title_leaves_the_blocks_clear(strict_page, site_url, query, size):
    """On a full pool the title was drawn over the top of the blocks on a translucent backing: it
    now has a line of its own above them (or sits beside the run when there is room)."""
    page = strict_page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{site_url}?{query}")
    settle(page, sweeps=False)
    layout, width, height = page.eval_on_selector(
        "canvas.blockview", "c => [JSON.parse(c.dataset.layout), c.clientWidth, c.clientHeight]")
    (tl, tt, tr, tb), (bl, bt, br, bb) = layout["title"], layout["blocks"]
    assert tr > tl and tb > tt and br - bl > 100 and bb - bt >= 24, layout   # both drawn, the plot readable
    assert tr <= bl or tl >= br or tb <= bt or tt >= bb, f"the title {layout['title']} overlaps the blocks {layout['blocks']}"
    assert tl >= 0 and tt >= 0 and tr <= width and tb <= height, (layout["title"], width, height)
