"""What walking the page as its readers found (a lecturer, a blogger's embed, a serving engineer, a
phone), each held here: a P/D fleet's replica times in one readable unit and named for the part of
TTFT each pool times; the TTFT parts, the planner's and the lab's columns one unit each; on a
phone, nothing scrolled to hides under the fixed bar and a lane's stats keep number and unit on
one line; a planner embed's refusal points to what the embed has; a lab link without code opens
on FCFS; the papers' tiles are named before they run."""

import json
import re

import pytest

from support.page import settle

PD = ("vllm=1&requests=60&arrival=poisson&rate=8&prompt_mean=1500&output_mean=64"
      "&prefill_replicas=1&decode_replicas=2&link_gb_s=10")
PLAN = ("cost=roofline&vllm=1&requests=60&arrival=poisson&rate=6&prompt_mean=2000"
        "&output_mean=150&skew=0.2&kv_tokens=auto&slots=64&max_num_batched_tokens=8192"
        "&ttft_ms=1500&tpot_ms=35")
FLEET = "requests=120&arrival=poisson&rate=20&replicas=4&router=least_outstanding"


def texts(page, selector):
    return page.eval_on_selector_all(selector, "es => es.map(e => [e.textContent.trim(), e.dataset.value])")


def one_unit(cells):
    """The unit of a column of "<number> <unit>" cells; fails on two units or a 0.0xx s."""
    units = {t.split()[-1] for t, _ in cells}
    assert len(units) == 1, cells
    assert not any(re.match(r"0\.0\d* s$", t) for t, _ in cells), cells   # not "0.0705 s"
    for t, v in cells:                                   # and each the value it carries
        n = float(t.split()[0].replace(",", "")) * (1000 if t.endswith(" s") else 1)
        assert abs(n - float(v)) <= max(0.051, 0.006 * float(v)), (t, v)
    return units.pop()


def test_a_pd_fleets_replica_times_have_one_unit_and_say_which_part_of_ttft(strict_page, site_url):
    """A prefill replica's TTFT (arrival -> its prompt computed) over decode replicas' (the KV's
    arrival -> the first token) read "2.14 s" over "0.0705 s" under "TTFT p95", as if each were the
    user's. Now: one unit, "TTFT part p95", and each pool's heading names its parts."""
    page = strict_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{site_url}?{PD}")
    settle(page)
    cells = texts(page, '#fleet-lanes td[data-metric$=".ttft.p95"]')
    assert len(cells) == 3
    one_unit(cells)
    heads = [t for t, _ in texts(page, "#fleet-lanes thead th")]
    assert "TTFT part p95" in heads and "TTFT p95" not in heads, heads
    pools = [t for t, _ in texts(page, "#fleet-lanes tr.pool-head")]
    assert "TTFT part: prefill queue + prefill" in pools[0], pools
    assert "TTFT part: decode queue + first decode step" in pools[1], pools
    assert "decode queue + first decode step" in page.get_attribute('[data-metric="decode0.ttft.p95"]', "title")
    # the parts' table below: its means and p95s in one unit (not "2.10 s" among "338.3 ms")
    one_unit(texts(page, '#fleet-parts td[data-metric^="fleet.ttft_parts."]'))
    # every router about alike (2.35 s to 2.38 s): a column of seconds still
    assert one_unit(texts(page, '#fleet-routers [data-metric$=".ttft.p95"]')) == "s"


def test_on_a_phone_nothing_scrolled_to_hides_under_the_bar(strict_page, site_url):
    """The Scenario bar is fixed to the bottom of a phone's screen: a control reached with Tab
    stopped under it, and the fleet link's jump put the figure's edge above the screen."""
    page = strict_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{site_url}?{FLEET}")
    settle(page)
    bar = page.evaluate("() => document.querySelector('.phone-bar').getBoundingClientRect().height")
    assert bar <= 64, f"the bar is {bar} px tall (its button wrapped)"
    page.click("#fleet-jump a")
    page.wait_for_function("() => { const r = document.getElementById('fig-fleet').getBoundingClientRect();"
                           " return r.top >= 0 && r.top < 40; }")
    page.evaluate("() => window.scrollTo(0, 0)")
    hidden = []
    for _ in range(160):
        page.keyboard.press("Tab")
        got = page.evaluate("""() => { const a = document.activeElement;
          if (!a || a === document.body || a.closest('.phone-bar, .controls')) return null;
          const r = a.getBoundingClientRect(); if (!r.height) return null;
          const y = Math.min(innerHeight - 1, Math.max(0, r.top + r.height / 2));
          const hit = document.elementFromPoint(Math.max(0, r.left + 2), y);
          return hit && hit.closest('.phone-bar') ? (a.id || a.textContent.trim().slice(0, 30)) : null; }""")
        if got:
            hidden.append(got)
    assert not hidden, f"focused under the phone bar: {hidden}"


def test_on_a_phone_a_lanes_stats_keep_each_number_with_its_unit(strict_page, site_url):
    page = strict_page
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(site_url)
    settle(page, sweeps=False)
    split = page.evaluate("""() => [...document.querySelectorAll('.lane-stats')].flatMap(box => {
      const out = [], walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      for (let n; (n = walk.nextNode());) {
        const m = /[\\d.,]+ (s|ms|passes|useful)/.exec(n.textContent); if (!m) continue;
        const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
        if (new Set([...r.getClientRects()].map(q => Math.round(q.top))).size > 1) out.push(m[0]);
      }
      // a bold number and the word after it ("3,892" "passes") on one line too
      for (const b of box.querySelectorAll('b')) {
        const next = b.nextSibling; if (!next || !next.textContent.trim()) continue;
        if (Math.abs(b.getBoundingClientRect().top - (() => { const r = document.createRange();
          r.setStart(next, 0); r.setEnd(next, Math.min(2, next.textContent.length));
          return r.getBoundingClientRect().top; })()) > 4) out.push(b.textContent + next.textContent);
      }
      return out; })""")
    assert not split, f"split over two lines: {split}"


def test_the_planner_embed_refusal_points_to_the_explorer(strict_page, site_url):
    """An embed on the article's cost model (set in its link: with none, it opens on a roofline
    deployment) cannot plan; it said 'press "Use a roofline deployment"', a button an embed does
    not have."""
    page = strict_page
    page.set_viewport_size({"width": 820, "height": 520})
    page.goto(f"{site_url}?embed=plan&requests=20&cost=article")
    settle(page)
    page.wait_for_function("() => /roofline/.test(document.getElementById('plan-status').textContent)")
    status = page.text_content("#plan-status")
    assert "press" not in status and "Open the explorer" in status, status
    assert page.is_hidden("#plan-roofline") and page.is_visible("#embed-open")


def test_the_planners_columns_read_alike_and_its_reason_names_rows_as_the_table(strict_page, site_url):
    page = strict_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{site_url}?{PLAN}")
    settle(page)
    page.click("#plan-run")
    page.wait_for_selector("#plan-reason-text", state="attached", timeout=240_000)
    settle(page)
    gpg = [t for t, _ in texts(page, '#plan-table [data-metric$=".goodput_per_gpu"]')]
    assert gpg and all(re.fullmatch(r"\d+\.\d{3}", t) for t in gpg), gpg    # "0.620", not "0.62"
    for name in ("ttft_p95", "tpot_p95"):
        one_unit(texts(page, f'#plan-table [data-metric$=".{name}"]'))
    rows = page.eval_on_selector_all("#plan-table tbody th", "ts => ts.map(t => t.textContent)")
    reason = page.text_content("#plan-reason-text")
    named = re.findall(r"(colocated \d+ × TP \d+|P/D \d+ prefill \(TP \d+\) : \d+ decode \(TP \d+\))", reason)
    assert len(named) == 2 and all(n in rows for n in named), (reason, rows[:3])


def test_a_lab_link_without_code_opens_on_fcfs_and_names_its_columns(strict_page, site_url):
    """`?scheduler=custom&challenge=…` (a lecturer's link) opened an empty editor refused by the
    engine; the challenge's column read "ttft p95", and "slo_attainment" beside "within the SLO"."""
    page = strict_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{site_url}?requests=24&scheduler=custom&challenge=ttft_p95")
    page.wait_for_selector("#lab-verdict[data-verdict]", state="attached", timeout=240_000)
    settle(page)
    code = page.eval_on_selector_all('[data-editor="policy"] .cm-line', "ls => ls.map(l => l.textContent).join('\\n')")
    assert "class " in code and "Policy" in code, code[:200]
    assert page.text_content("#lab-error") == ""
    heads = page.eval_on_selector_all("#lab-scores th", "ts => ts.map(t => t.textContent)")
    assert heads == ["policy", "TTFT p95", "within the SLO"], heads
    one_unit(page.eval_on_selector_all('#lab-scores [data-lab-metric$=".ttft.p95"]',
                                       "es => es.map(e => [e.textContent, e.dataset.value])"))
    page.select_option("#lab-challenge", "ttft_slo")
    page.wait_for_function("() => [...document.querySelectorAll('#lab-scores th')].length === 2", timeout=240_000)
    heads = page.eval_on_selector_all("#lab-scores th", "ts => ts.map(t => t.textContent)")
    assert heads == ["policy", "within the SLO"], heads


def test_the_papers_tiles_are_named_before_they_run(strict_page, site_url):
    """Before "Recompute", the tiles read the engine's ids ("vllm-fig2", "article-skew-zero: not run
    yet"); they say the paper and the check, as after a run."""
    page = strict_page
    page.goto(site_url)
    settle(page, sweeps=False)
    tiles = page.eval_on_selector_all("#papers-grid [data-paper]", "ts => ts.map(t => [t.dataset.paper, t.textContent])")
    assert len(tiles) >= 12
    for pid, text in tiles:
        assert pid not in text, (pid, text)
    assert "vLLM" in dict(tiles)["vllm-fig2"] and "Fig. 2" in dict(tiles)["vllm-fig2"]
    detail = page.text_content("#papers-detail")
    assert "article-skew-zero" not in detail and "The article" in detail, detail


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_in_lecture_type_the_sizing_charts_tick_labels_do_not_overprint(strict_page, site_url, size):
    """On the projector the sizing chart's last x label ran into the right axis' "0%": "10240%"."""
    page = strict_page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{site_url}?story=7&lecture=1")
    settle(page)
    boxes = json.loads(page.get_attribute("#chart-slots", "data-ticks") or "null")
    assert boxes, "the chart names its tick labels' boxes (data-ticks)"
    clash = [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]
             if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]]
    assert not clash, clash
