"""The page, driven like a user: controls, presets, keyboard, URL, exports, self-check, bad input,
embed mode. Every number the page shows is compared with the same call run natively."""

import csv
import io
import json
import re
import struct
from urllib.parse import parse_qs, urlsplit

import pytest

from support.page import (CHART_TEXT_RECORDER, chart_boxes, flat_metrics, metrics_match, read_metrics,
                          scenario_from_query, settle, wait_state)



def redrawn(page, before):
    """Wait until the page has drawn a new result (data-drawn bumped) and nothing is computing."""
    page.wait_for_function("n => Number(document.documentElement.dataset.drawn) > n"
                           " && !('busy' in document.documentElement.dataset)", arg=before)


def drawn(page):
    return int(page.get_attribute("html", "data-drawn") or 0)


def type_into(page, selector, text):
    page.fill(selector, text)
    page.press(selector, "Enter")


def query(page):
    return {k: v[0] for k, v in parse_qs(urlsplit(page.url).query).items()}


def test_controls_presets_and_keyboard_show_native_numbers(strict_page, site_url,
                                                           native):
    page = strict_page
    page.goto(site_url)
    wait_state(page, "ready")
    page.wait_for_selector("html:not([data-busy])", state="attached")
    shown = read_metrics(page)
    assert metrics_match(shown, flat_metrics(native.compare({}))) >= 46

    # A control: slots 8 -> 4, typed like a user; the URL follows.
    n = drawn(page)
    type_into(page, "#ctl-slots", "4")
    redrawn(page, n)
    assert query(page)["slots"] == "4"
    shown = read_metrics(page)
    assert metrics_match(shown, flat_metrics(native.compare({"server": {"slots": 4}}))) >= 46

    # A preset button, then a preset by number key (the second preset: identical lengths).
    presets = native("presets", {})
    n = drawn(page)
    page.click('[data-preset="chat"]')
    redrawn(page, n)
    assert query(page) == {"preset": "chat"}
    assert metrics_match(read_metrics(page),
                         flat_metrics(native.compare(presets["chat"]["scenario"]))) >= 46

    n = drawn(page)
    page.locator("body").press("2")
    redrawn(page, n)
    second = list(presets)[1]
    shown = read_metrics(page)
    assert metrics_match(shown, flat_metrics(native.compare(presets[second]["scenario"]))) >= 46
    assert second == "equal"
    assert shown["speedup.passes"] == 1.0

    # A preset made for the vLLM-style scheduler switches its lane on.
    assert "kv_pressure" in presets
    n = drawn(page)
    page.click('[data-preset="kv_pressure"]')
    redrawn(page, n)
    assert query(page) == {"preset": "kv_pressure", "vllm": "1"}
    shown = read_metrics(page)
    expected = native.compare(presets["kv_pressure"]["scenario"], ["static", "continuous", "vllm"])
    assert metrics_match(shown, flat_metrics(expected)) >= 68
    assert shown["vllm.preemptions"] > 0 and page.is_visible("canvas.blockview")

    # Playhead from the keyboard: Home, three steps right, one left; the scrubber and URL agree.
    page.locator("body").press("Home")
    for key in ["ArrowRight", "ArrowRight", "ArrowRight", "ArrowLeft"]:
        page.locator("body").press(key)
    assert page.input_value("#scrub") == "2"
    page.wait_for_function("() => location.search.includes('pass=2')")
    # the readout is drawn with the next frame (which a loaded machine may delay): wait for it
    page.wait_for_function("() => /^pass 2 of [\\d,]+/.test(document.getElementById('playhead-readout').textContent)")
    # Space plays: the playhead moves on its own; space again pauses.
    page.locator("body").press(" ")
    page.wait_for_function("() => Number(document.getElementById('scrub').value) > 2")
    page.locator("body").press(" ")
    assert page.get_attribute("#btn-play", "aria-label") == "Play (space)"


def test_shared_url_reproduces_the_view(strict_page, site_url, native, browser):
    q = "requests=40&slots=4&skew=0.3&seed=7&chunk=256&vllm=1&pass=50"
    page = strict_page
    page.goto(f"{site_url}?{q}")
    wait_state(page, "ready")
    page.wait_for_selector("html[data-drawn]:not([data-busy])", state="attached")
    expected = native.compare(scenario_from_query(q), ["static", "continuous", "vllm"])
    shown = read_metrics(page)
    assert metrics_match(shown, flat_metrics(expected)) >= 68
    assert "vllm.passes" in shown
    assert page.input_value("#scrub") == "50"
    assert page.input_value("#ctl-chunk") == "256"

    # Keyboard inspection: focus the static timeline, move to slot 2; the tooltip names the request
    # the native run has in that slot at the playhead.
    page.focus('canvas[data-lane="static"]')
    page.keyboard.press("ArrowDown")
    rid = next(seg[1] for seg in expected["static"]["segments"] if seg[0] == 1 and seg[3] <= 50 <= seg[4])
    tip = page.text_content("#tooltip")
    assert page.is_visible("#tooltip") and f"Request #{rid} " in tip and "TTFT" in tip
    page.focus("#ctl-output_mean")

    # Change something, then open the page's own URL in a fresh page: the same view comes back.
    n = drawn(page)
    type_into(page, "#ctl-output_mean", "50")
    redrawn(page, n)
    url = page.url
    first = read_metrics(page)
    other = browser.new_page()
    try:
        other.goto(url)
        wait_state(other, "ready")
        other.wait_for_selector("html[data-drawn]:not([data-busy])", state="attached")
        assert read_metrics(other) == first
        assert other.input_value("#ctl-output_mean") == "50"
        assert other.input_value("#scrub") == page.input_value("#scrub")
    finally:
        other.close()


def _png_size(data: bytes):
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_exports_carry_the_same_numbers(strict_page, site_url, native, tmp_path):
    page = strict_page
    page.goto(f"{site_url}?requests=24&seed=3")
    wait_state(page, "ready")
    page.wait_for_selector("html[data-drawn]:not([data-busy])", state="attached")
    expected = native.compare({"workload": {"requests": 24, "seed": 3}})

    def grab(button):
        with page.expect_download() as d:
            page.click(button)
        path = tmp_path / d.value.suggested_filename
        d.value.save_as(path)
        return path

    w, h = _png_size(grab("#btn-png").read_bytes())
    assert w > 600 and h > 200

    got = json.loads(grab("#btn-json").read_text())
    assert got["request"]["method"] == "compare"
    assert got["result"] == expected

    # The CSV: units in the headers, times rounded to the microsecond (the JSON above is exact).
    rows = list(csv.DictReader(io.StringIO(grab("#btn-csv").read_text())))
    assert len(rows) == 2 * 24
    assert {"ttft (ms)", "prompt (tokens)", "done_pass (pass)", "id"} <= set(rows[0])
    for row in rows:
        want = expected[row["scheduler"]]["requests"][int(row["id"])]
        for key in ("arrive", "admit", "first_token", "done", "ttft", "tpot", "e2e"):
            text = row[f"{key} (ms)"]
            assert len(text.partition(".")[2]) <= 3, (key, text)
            assert abs(float(text) - want[key]) <= 0.0005 * (1 + 1e-9), (row["scheduler"], row["id"], key)
        for key in ("prompt (tokens)", "out (tokens)", "first_token_pass (pass)",
                    "done_pass (pass)", "preemptions"):
            assert int(row[key]) == want[key.split(" ")[0]]

    page.click("#btn-copy-link")
    assert page.input_value("#share-text") == page.url
    page.select_option("#embed-figure", "skew")
    page.click("#btn-copy-embed")
    snippet = page.input_value("#share-text")
    assert snippet.startswith("<iframe ") and "embed=skew" in snippet and "requests=24" in snippet
    figures = native("schema", {})["figures"]
    assert f'height="{figures["skew"]["embed_height"]}"' in snippet and "border:0" in snippet
    assert sorted(page.eval_on_selector_all("#embed-figure option", "os => os.map(o => o.value)")) \
        == sorted(figures)        # every figure can be embedded, the self-check and story too


def test_the_png_wraps_its_scenario_and_carries_a_traces_credit(strict_page, site_url, tmp_path):
    """Download PNG drew the scenario in one line, cut at the image's edge ("... TTFT limit 500 ·
    TP"), and a production trace's attribution, in its CSV, was not in its picture."""
    page = strict_page
    page.add_init_script(CHART_TEXT_RECORDER)
    page.set_viewport_size({"width": 1920, "height": 1080})
    page.goto(f"{site_url}?trace=azure-conv-2023&count=200&cost=roofline&kv_tokens=auto&vllm=1"
              "&ttft_ms=500&tpot_ms=50&model=llama-3.1-70b&tp=4&gpu_mem=0.9&slots=128&chunk=1024")
    settle(page, sweeps=False)
    with page.expect_download() as d:
        page.click("#btn-png")
    d.value.save_as(tmp_path / "t.png")
    texts = chart_boxes(page, "export")
    assert len(texts) >= 6
    assert all(right <= width - 15 for _, _, right, width in texts), [t for t in texts if t[2] > t[3] - 15]
    words = " ".join(t for t, *_ in texts)
    assert "CC BY 4.0" in words, words


def test_self_check_runs_in_the_page(strict_page, site_url, native):
    page = strict_page
    page.goto(site_url)
    wait_state(page, "ready")
    page.click("#btn-check")
    page.wait_for_selector("#check-summary[data-total]", state="attached", timeout=120_000)
    total = int(page.get_attribute("#check-summary", "data-total"))
    passed = int(page.get_attribute("#check-summary", "data-passed"))
    want = native("check", {})
    assert total == want["passed"] + want["failed"] and total > 0
    assert passed == total
    assert page.text_content("#check-summary") == f"{total} of {total} passed"


def test_bad_input_gets_a_message_and_the_page_keeps_working(strict_page, site_url,
                                                             native):
    page = strict_page
    # Bad values in the link: each named beside its control; the rest of the link still applies.
    page.goto(f"{site_url}?slots=0&skew=banana&requests=1e999&seed=5&theme=%3Cscript%3E"
              "&replica=4&utm_source=post")
    wait_state(page, "ready")
    page.wait_for_selector("html[data-drawn]:not([data-busy])", state="attached")
    schema = native("schema", {})
    allowed = next(f["allowed"] for f in schema["fields"] if f["path"] == "server.slots")
    assert f"server.slots = 0: must be {allowed}" in page.text_content('[data-error-for="slots"]')
    assert "workload.skew = banana" in page.text_content('[data-error-for="skew"]')
    assert "workload.requests" in page.text_content('[data-error-for="requests"]')
    assert "theme" in page.text_content("#form-message")
    # a parameter that is no setting: named, with the nearest name; a tracker's: not a word
    assert "replica: not a setting of this page (ignored; did you mean replicas?)" in \
        page.text_content("#form-message")
    assert "utm_source" not in page.text_content("#form-message")
    assert page.locator("script:not([src])").count() == 0
    assert metrics_match(read_metrics(page),
                         flat_metrics(native.compare({"workload": {"seed": 5}}))) >= 46

    # Bad values typed into a control: a message, no recompute, the last result stays.
    before = read_metrics(page)
    for text in ["abc", "-3", "2.5", "", "1e9", "1,5", "2_000", "2,0000"]:
        page.fill("#ctl-slots", text)
        page.press("#ctl-slots", "Enter")
        msg = page.text_content('[data-error-for="slots"]')
        assert msg.startswith("server.slots = ") and msg.endswith(f"must be {allowed}"), (text, msg)
    assert read_metrics(page) == before

    # A value the schema allows but the engine rejects (a KV budget too small for one request):
    # the engine's own message lands beside the control.
    page.check("#ctl-vllm")
    page.wait_for_selector("html:not([data-busy])", state="attached")
    page.fill("#ctl-kv_tokens", "100")
    page.press("#ctl-kv_tokens", "Enter")
    page.wait_for_selector('[data-error-for="kv_tokens"]:not(:empty)', state="attached")
    assert page.text_content('[data-error-for="kv_tokens"]').startswith("server.kv_tokens = 100: must be")
    assert read_metrics(page)["static.passes"] == before["static.passes"]
    # Enter again on the refused value (as when the typing pause had already sent it): no new run
    # answers, and the engine's message stays (on a loaded machine the pause often wins the race).
    refused, n = page.text_content('[data-error-for="kv_tokens"]'), drawn(page)
    page.press("#ctl-kv_tokens", "Enter")
    page.wait_for_selector("html:not([data-busy])", state="attached")
    assert drawn(page) == n      # the refusal is no answer: the last result is kept, not redrawn as one
    assert page.text_content('[data-error-for="kv_tokens"]') == refused

    # Good values afterwards work as usual, and the messages go away.
    n = drawn(page)
    type_into(page, "#ctl-kv_tokens", "")
    redrawn(page, n)
    assert page.text_content('[data-error-for="kv_tokens"]') == ""
    n = drawn(page)
    type_into(page, "#ctl-slots", "6")
    redrawn(page, n)
    assert page.text_content('[data-error-for="slots"]') == ""
    expected = native.compare({"workload": {"seed": 5}, "server": {"slots": 6}}, ["static", "continuous", "vllm"])
    assert metrics_match(read_metrics(page), flat_metrics(expected)) >= 68


@pytest.mark.parametrize("figure", ["timeline", "slots"])
def test_embed_mode_shows_one_figure(strict_page, site_url, figure):
    page = strict_page
    page.goto(f"{site_url}?embed={figure}&theme=dark&lecture=1")
    wait_state(page, "ready")
    visible = page.eval_on_selector_all(
        "section.figure", "els => els.filter(e => e.offsetParent !== null).map(e => e.id)")
    assert visible == [f"fig-{figure}"]
    assert not page.is_visible("#controls") and not page.is_visible(".masthead")
    assert page.get_attribute("html", "data-theme") == "dark"
    assert "lecture" in page.get_attribute("html", "class")
    canvas = page.locator(f"#fig-{figure} canvas").first
    box = canvas.bounding_box()
    assert box["width"] > 300 and box["height"] > 100
    assert page.get_attribute("#embed-open", "href").find("embed=") == -1


@pytest.mark.parametrize("name", ["stall", "cost"])   # cost: the figure's former name (old links)
def test_stall_embed_shows_the_native_prefill_stall(strict_page, site_url, native, name):
    page = strict_page
    page.goto(f"{site_url}?embed={name}")
    wait_state(page, "ready")
    page.wait_for_selector('#stall-panel [data-stat="stall.chunked"]')
    visible = page.eval_on_selector_all(
        "section.figure", "els => els.filter(e => e.offsetParent !== null).map(e => e.id)")
    assert visible == ["fig-stall"]
    assert page.get_attribute("html", "data-embed") == "stall"
    assert page.text_content("#form-message") == ""          # an old name is no error
    want = native("stall", {"scenario": {}})
    shown = {s: float(page.get_attribute(f'[data-stat="{s}"]', "data-value"))
             for s in ("stall.decode", "stall.unchunked", "stall.chunked")}
    assert shown == {"stall.decode": want["unchunked"]["decode"],
                     "stall.unchunked": want["unchunked"]["worst"],
                     "stall.chunked": want["chunked"]["worst"]}


def test_the_slots_slider_spans_vllms_defaults(strict_page, site_url, native):
    """The slots slider walks 1..4,096 on a log scale (it stopped at 64 while vLLM's defaults are
    256 and 1,024): a URL's value puts the thumb on it, and moving the thumb runs that value."""
    page = strict_page
    page.goto(site_url + "?slots=1024&requests=40")
    wait_state(page, "ready")
    page.wait_for_selector("html:not([data-busy])", state="attached")
    slider = '#ctl-slots ~ input[type="range"]'
    assert page.get_attribute(slider, "aria-valuetext") == "1024"
    at_1024 = int(page.eval_on_selector(slider, "e => e.value"))
    top = int(page.get_attribute(slider, "max"))
    assert 0 < at_1024 < top

    # the keyboard steps one stop down: 1,024 -> 896 (4 stops a doubling)
    n = drawn(page)
    page.focus(slider)
    page.keyboard.press("ArrowLeft")
    redrawn(page, n)
    assert query(page)["slots"] == "896"
    assert page.input_value("#ctl-slots") == "896"
    assert page.get_attribute(slider, "aria-valuetext") == "896"

    # dragged to the low end: slots 1, the page's numbers the native engine's
    n = drawn(page)
    page.fill(slider, "0")
    redrawn(page, n)
    assert query(page)["slots"] == "1"
    expected = native.compare({"workload": {"requests": 40}, "server": {"slots": 1}})
    assert metrics_match(read_metrics(page), flat_metrics(expected)) >= 46


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_every_drop_down_shows_its_whole_value(strict_page, site_url, size):
    """A drop-down in the scenario column is as wide as its value: 'azure-conv-2023' read
    'azure-cc' and 'least_outstanding' 'round_r' in a 6.2 rem box. The longest values are set;
    each visible select's text, measured in its own font, fits inside it beside the arrow."""
    page = strict_page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(site_url + "?trace=azure-conv-2023&count=200&cost=roofline&model=llama-3.1-8b"
                         "&gpu=h100-80gb&replicas=2&router=least_outstanding&vllm=1"
                         "&preemption=recompute")
    wait_state(page, "ready")
    short = page.evaluate("""() => {
        const ctx = document.createElement('canvas').getContext('2d');
        return [...document.querySelectorAll('#controls .field select')]
          .filter((s) => s.offsetParent !== null)
          .map((s) => {
            const cs = getComputedStyle(s);
            ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
            const text = s.options[s.selectedIndex].text;
            const room = s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 16;
            return [s.id, text, Math.round(ctx.measureText(text).width), Math.round(room)];
          })
          .filter(([, , need, room]) => need > room);
    }""")
    assert short == [], short
