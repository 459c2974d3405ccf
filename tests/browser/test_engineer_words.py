"""A serving engineer's words: vLLM's knob names in the visible labels (the sidebar and the
deployment panel name a knob alike, the model and GPU selects show their names whole at
1366x768), the metric cards `vllm bench serve` prints (the native numbers, fitting the metrics
embed), and "Copy as vllm serve flags" (the engine's command, copied)."""

from urllib.parse import urlsplit

from support.page import flat_metrics, metrics_match, read_metrics, scenario_from_query, settle

ROOFLINE = "vllm=1&cost=roofline&model=mixtral-8x7b&gpu=rtx-4090-24gb&tp=2&kv_tokens=4000&requests=24"



def label_of(page, control_id):
    """A label's words without its unit."""
    return page.eval_on_selector(f'label[for="{control_id}"]',
                                 "l => [...l.childNodes].filter(n => !n.classList?.contains('unit'))"
                                 ".map(n => n.textContent).join('').trim()")


def test_labels_name_vllms_knobs_alike_and_selects_show_whole_names(strict_page, site_url):
    page = strict_page
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{site_url}?{ROOFLINE}")
    settle(page)
    for cid, name in [("ctl-slots", "max_num_seqs"), ("ctl-max_num_batched_tokens", "max_num_batched_tokens"),
                      ("ctl-chunk", "long_prefill_token_threshold"), ("ctl-block_size", "block_size"),
                      ("ctl-prefix_caching", "enable_prefix_caching"), ("ctl-tp", "tensor_parallel_size"),
                      ("ctl-gpu_mem", "gpu_memory_utilization"), ("ctl-dtype", "dtype")]:
        text = page.text_content(f'label[for="{cid}"]')
        assert f"({name})" in text, (cid, text)
    # the deployment panel names the same knobs as the sidebar
    for panel, sidebar in [("kv-gpus", "ctl-tp"), ("kv-gpu_mem_utilization", "ctl-gpu_mem"),
                           ("kv-dtype", "ctl-dtype"), ("kv-fit", "ctl-fit")]:
        assert label_of(page, panel) == label_of(page, sidebar), (panel, sidebar)
    # no label pushes the sidebar wider than its box
    assert page.eval_on_selector("#controls", "c => c.scrollWidth <= c.clientWidth")
    # every model and GPU select shows its chosen name whole: the text fits inside the box,
    # less its padding and the arrow
    for sel in ["#ctl-model", "#ctl-gpu", "#kv-model", "#kv-gpu"]:
        for value in page.eval_on_selector(sel, "s => [...s.options].map(o => o.value)"):
            page.select_option(sel, value)
            need, room = page.eval_on_selector(sel, """s => {
              const cs = getComputedStyle(s), g = document.createElement('canvas').getContext('2d');
              g.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
              const text = s.options[s.selectedIndex].text;
              return [g.measureText(text).width + 20,
                      s.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)]; }""")
            assert need <= room, f"{sel} = {value}: {need:.0f} px of text in {room:.0f} px"
        if sel.startswith("#ctl"):
            settle(page)


def test_bench_serve_cards_show_the_native_numbers_and_fit_the_embed(strict_page, site_url, native):
    page = strict_page
    page.set_viewport_size({"width": 820, "height": 520})
    page.goto(f"{site_url}?embed=metrics&{ROOFLINE}")
    settle(page)
    shown = read_metrics(page)
    scenario = scenario_from_query(urlsplit(page.url).query)
    want = flat_metrics(native.compare(scenario, ["static", "continuous", "vllm"]))
    for s in ("static", "continuous", "vllm"):
        for key in ("served_rps", "total_token_throughput_tok_s", "peak_concurrency",
                    "peak_running"):
            assert f"{s}.{key}" in shown, f"{s}.{key} is not on a card"
    # the speedup (SPEC 5's cards: in passes and time), without the headline's help in an embed
    for key in ("speedup.time", "speedup.passes"):
        assert page.is_visible(f'.card [data-metric="{key}"]') and shown[key] == want[key], key
    assert metrics_match(shown, want) >= 60
    assert page.evaluate("() => document.documentElement.scrollHeight") <= 520
    # the cards that show them are shown whole: nothing scrolls sideways, nothing below the frame
    cards = [k.split(".", 1)[1] for k in shown if k.split(".", 1)[1] in (
        "served_rps", "total_token_throughput_tok_s", "peak_concurrency", "peak_running")]
    boxes = page.eval_on_selector_all(
        ".card", """(cs, keys) => cs.filter(c => keys.some(k => c.querySelector(`[data-metric$=".${k}"]`)))
          .map(c => [c.querySelector('h4').textContent, c.scrollWidth - c.clientWidth,
                     c.getBoundingClientRect().bottom])""", sorted(set(cards)))
    assert boxes, "no card shows them"
    for title, wider, bottom in boxes:
        assert wider <= 0 and bottom <= 520, (title, wider, bottom)


def test_copy_as_vllm_serve_flags(strict_page, site_url, native):
    page = strict_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"],
                                   origin=f"{urlsplit(site_url).scheme}://{urlsplit(site_url).netloc}")
    page.goto(f"{site_url}?{ROOFLINE}&slots=12&prefix_caching=0&policy=priority")
    settle(page)
    page.click("#btn-copy-serve")
    page.wait_for_selector("#btn-copy-serve[data-command]", state="attached")
    command = page.get_attribute("#btn-copy-serve", "data-command")
    scenario = scenario_from_query(urlsplit(page.url).query)
    assert command == native("serve_flags", {"scenario": scenario})["command"]
    assert command.startswith("vllm serve mistralai/Mixtral-8x7B-v0.1 --tensor-parallel-size 2 ")
    for part in ("--max-num-seqs 12", "--num-gpu-blocks-override 251", "--no-enable-prefix-caching",
                 "--scheduling-policy priority"):
        assert part in command, part
    assert page.evaluate("() => navigator.clipboard.readText()") == command
    assert page.input_value("#share-text") == command
    assert page.text_content("#export-status") == "vllm serve command copied."


def test_empty_fields_say_what_empty_means_and_a_trace_hides_the_generator(strict_page, site_url):
    """The roofline's fitted terms said "unlimited" when empty; the generator's fields stayed
    editable while a production trace made the requests (and changed nothing)."""
    page = strict_page
    page.goto(f"{site_url}?{ROOFLINE}")
    settle(page)
    for cid in ["ctl-flops_eff", "ctl-bw_eff", "ctl-overhead_ms", "ctl-row_us"]:
        assert page.get_attribute(f"#{cid}", "placeholder") == "fitted", cid
    assert page.get_attribute("#ctl-kv_tokens", "placeholder") == "unlimited"
    page.fill("#ctl-flops_eff", "fitted")           # the word it shows is read back as empty
    page.press("#ctl-flops_eff", "Enter")
    assert page.text_content("#ctl-flops_eff-err") == ""
    generator = ["requests", "skew", "output_mean", "prompt_mean", "arrival"]
    assert all(page.is_visible(f"#ctl-{c}") for c in generator)
    page.select_option("#ctl-trace", "azure-conv-2023")
    settle(page)
    assert not any(page.is_visible(f"#ctl-{c}") for c in generator)
    assert page.is_visible("#ctl-count") and page.is_visible("#ctl-seed")
    page.select_option("#ctl-trace", "none")
    settle(page)
    assert all(page.is_visible(f"#ctl-{c}") for c in generator)
    assert "flops_eff" not in scenario_from_query(urlsplit(page.url).query).get(
        "server", {}).get("cost", {})
