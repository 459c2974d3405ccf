"""The policy lab in the page (SPEC §10): a policy typed into the editor runs beside the built-in
schedulers with the native numbers; an exception is marked at its line; a policy that never returns
is stopped within 2 s while the shared engine goes on, and the next run works; the code travels in
the URL (base64url); a challenge scores the reader's policy beside the built-in ones; the editor's
styles work under the strict CSP (strict_page fails on any violation)."""

from __future__ import annotations

import base64
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from support.page import flat_metrics, metrics_match, read_metrics, settle, wait_state

EXAMPLES = Path(__file__).resolve().parents[2] / "py_engine" / "policies" / "examples"
SJF = (EXAMPLES / "sjf.py").read_text()
FCFS = (EXAMPLES / "fcfs.py").read_text()
EDITOR = '[data-editor="policy"]'

RAISES = """from py_engine.policies import Policy


class Broken(Policy):
    def schedule(self):
        while self.sim.free and self.sim.waiting:
            rid = self.sim.waiting.popleft()
            self.sim.admit(rid, self.chunk // 0)
"""

NEVER_RETURNS = """from py_engine.policies import Policy


class Forever(Policy):
    def schedule(self):
        while True:
            pass
"""


def b64(code: str) -> str:
    return base64.urlsafe_b64encode(code.encode()).decode().rstrip("=")


def lab_url(site_url, code, extra=""):
    return f"{site_url}?requests=24&seed=5&scheduler=custom&policy_name=mine&policy_code={b64(code)}{extra}"


def editor_text(page) -> str:
    return page.eval_on_selector_all(f"{EDITOR} .cm-line", "ls => ls.map(l => l.textContent).join('\\n')")


def type_policy(page, code: str, name: str) -> None:
    """Replace the editor's text as a reader would paste it, name it, and press Run."""
    page.click(f"{EDITOR} .cm-content")
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(code)
    page.fill("#lab-name", name)
    page.click("#lab-run")


def drawn_after(page, n: int) -> None:
    page.wait_for_function("n => Number(document.documentElement.dataset.drawn) > n", arg=n)


def drawn(page) -> int:
    return int(page.evaluate("() => document.documentElement.dataset.drawn"))


def test_typing_the_sjf_example_runs_it_with_the_native_numbers(strict_page, site_url, native):
    page = strict_page
    page.goto(f"{site_url}?requests=24&seed=5")
    settle(page)
    page.click("#lab-open")
    page.wait_for_selector(f"{EDITOR}[data-ready] .cm-content")
    settle(page)
    # the editor is CodeMirror's, styled (style-mod's sheets applied under the strict CSP)
    assert page.eval_on_selector(f"{EDITOR} .cm-editor", "e => getComputedStyle(e).display") == "flex"
    assert page.locator(f"{EDITOR} .cm-line span").count() > 0      # Python highlighted
    n = drawn(page)
    type_policy(page, SJF, "sjf")
    drawn_after(page, n)
    settle(page)
    shown = read_metrics(page)
    scenario = {"workload": {"requests": 24, "seed": 5}, "scheduler": "custom",
                "custom": {"name": "sjf", "code": SJF}}
    want = flat_metrics(native.compare(scenario, ["static", "continuous", "custom"]))
    assert "custom.ttft.p95" in shown and "custom.passes" in shown
    assert metrics_match(shown, want) > 40
    # the lane and the scores name the reader's policy, not only "Your policy"
    lane_title = page.text_content('.lane[data-lane="custom"] .lane-title')
    assert "sjf" in lane_title, lane_title
    assert "sjf" in page.text_content("#lab-scores tr.lab-yours")
    # the link carries the code, base64url of its UTF-8 bytes, and brings it back
    q = parse_qs(urlsplit(page.url).query)
    assert q["scheduler"] == ["custom"] and q["policy_name"] == ["sjf"]
    padded = q["policy_code"][0] + "=" * (-len(q["policy_code"][0]) % 4)
    assert base64.urlsafe_b64decode(padded).decode() == SJF
    page.goto(page.url)
    settle(page)
    page.wait_for_selector(f"{EDITOR}[data-ready] .cm-content")
    assert editor_text(page) == SJF
    assert read_metrics(page)["custom.ttft.p95"] == want["custom.ttft.p95"]


def test_keys_typed_in_the_editor_are_code_not_shortcuts(strict_page, site_url):
    """The editor sits in a shadow root: a key typed there reaches the page's shortcut handler
    with the editor's host as its target. Typed key by key, "d", "l", "v", "s", Space and a digit
    are the code's, not the theme, Lecture, the vLLM lane, Story, play or a preset."""
    page = strict_page
    page.goto(lab_url(site_url, FCFS))
    settle(page)
    page.wait_for_selector(f"{EDITOR}[data-ready] .cm-content")
    before = page.evaluate("() => ({theme: document.documentElement.dataset.theme ?? null, "
                           "cls: document.documentElement.className, url: location.search})")
    page.click(f"{EDITOR} .cm-line >> nth=-1")
    page.keyboard.press("End")
    typed = "  # old lvs 2 d"
    page.keyboard.type(typed)
    assert typed in editor_text(page)
    after = page.evaluate("() => ({theme: document.documentElement.dataset.theme ?? null, "
                          "cls: document.documentElement.className, url: location.search})")
    assert after["theme"] == before["theme"]
    assert after["cls"] == before["cls"]           # no Lecture, no Story
    q = parse_qs(urlsplit(after["url"]).query)
    assert "preset" not in q and q["scheduler"] == ["custom"]   # the lab is still open
    assert page.is_visible(EDITOR)


def test_an_exception_is_marked_at_its_line(strict_page, site_url, native):
    page = strict_page
    page.goto(lab_url(site_url, RAISES))
    wait_state(page, "ready")
    page.wait_for_selector(f"{EDITOR}[data-error-line]")
    scenario = {"workload": {"requests": 24, "seed": 5}, "scheduler": "custom",
                "custom": {"name": "mine", "code": RAISES}}
    resp = native.handle({"method": "compare", "params": {
        "scenario": scenario, "schedulers": ["static", "continuous", "custom"]}})
    message = resp["error"]["message"]
    assert message.startswith("custom.code line 8: ZeroDivisionError"), message
    assert page.text_content("#lab-error") == message
    assert page.get_attribute(EDITOR, "data-error-line") == "8"
    assert page.locator(f"{EDITOR} .cm-lintRange-error").count() == 1
    assert page.locator(f"{EDITOR} .cm-lint-marker-error").count() == 1


def test_a_policy_that_never_returns_is_stopped_and_the_next_run_works(strict_page, site_url,
                                                                         native):
    page = strict_page
    page.goto(lab_url(site_url, FCFS))
    settle(page)
    page.wait_for_selector(f"{EDITOR}[data-ready] .cm-content")
    type_policy(page, NEVER_RETURNS, "forever")
    page.wait_for_selector("html[data-lab-stops='1']")
    assert int(page.get_attribute("html", "data-lab-stop-ms")) <= 2000
    page.wait_for_function("() => document.getElementById('lab-error').textContent.includes('did not return within')")
    # a fresh worker for the next run: the fcfs example equals the built-in continuous batching
    n = drawn(page)
    type_policy(page, FCFS, "fcfs")
    drawn_after(page, n)
    settle(page)
    shown = read_metrics(page)
    want = flat_metrics(native.compare({"workload": {"requests": 24, "seed": 5}}, ["continuous"]))
    mine = {k.replace("custom.", "continuous.", 1): v for k, v in shown.items() if k.startswith("custom.")}
    assert len(mine) > 20 and metrics_match(mine, want) == len(mine)
    assert page.text_content("#lab-error") == ""


def test_the_shared_engine_answers_while_a_policy_is_stuck(strict_page, site_url):
    """The reader's code runs in a worker of its own: while it is stuck, the figures' engine
    answers. The lab's limit is lengthened here (its test hook), so that the shared engine's
    answer does not race the machine's load against the 1.5 s stop."""
    page = strict_page
    page.add_init_script("globalThis.__cbxLabStuckMs = 600000")
    page.goto(lab_url(site_url, FCFS))
    settle(page)
    page.wait_for_selector(f"{EDITOR}[data-ready] .cm-content")
    type_policy(page, NEVER_RETURNS, "forever")
    page.wait_for_selector("html[data-pending]", state="attached")
    # the shared engine finishes everything it was asked, then answers one more call, while the
    # lab's call (the stuck one) is still pending and was never stopped
    stuck = page.evaluate("""async () => {
        const e = globalThis.__cbxEngine;
        for (let i = 0; ; i++) {        // busy for good (the stuck code on this engine): give up
            const j = await e.jobs(); if (!j.running && !j.queued) break;
            if (i > 3000) return ['busy', JSON.stringify(j)];
            await new Promise((ok) => setTimeout(ok, 20));
        }
        await e.call('schema', {});
        const d = document.documentElement.dataset;
        return [d.labStops || '0', 'pending' in d];
    }""")
    assert stuck == ["0", True], "the shared engine waited for the stuck policy"


def test_a_challenge_scores_yours_beside_the_built_in_policies(strict_page, site_url, native):
    page = strict_page
    schema = native("schema", {})
    ch = schema["figures"]["lab"]["challenges"][0]
    page.goto(lab_url(site_url, SJF, f"&challenge={ch['name']}"))
    settle(page)
    page.wait_for_selector("#lab-verdict[data-verdict]")
    built = native.compare(ch["scenario"], ch["rivals"])
    yours = native.compare({**ch["scenario"], "scheduler": "custom",
                            "custom": {"name": "mine", "code": SJF}}, ["custom"])
    first, _, rest = ch["metric"].partition(".")
    pick = lambda m: m[first][rest] if rest else m[first]  # noqa: E731
    cells = dict(page.eval_on_selector_all(
        "[data-lab-metric]", "els => els.map(e => [e.dataset.labMetric, e.dataset.value])"))
    for s in ch["rivals"]:
        assert float(cells[f"{s}.{ch['metric']}"]) == pick(built[s]["metrics"])
    assert float(cells[f"custom.{ch['metric']}"]) == pick(yours["custom"]["metrics"])
    beats = pick(yours["custom"]["metrics"]) < pick(built[ch["beat"]]["metrics"])
    assert page.get_attribute("#lab-verdict", "data-verdict") == ("beats" if beats else "not-yet")
    assert beats   # the sjf example is the challenge's model answer
    assert parse_qs(urlsplit(page.url).query)["challenge"] == [ch["name"]]
