"""A reader's trace file: one parser for the CLI and the page (scenario/tracefile.py; the page
sends the file's text to the engine). Each case once worked in one of the two and not the other:
upper-case headers, quoted cells, CR-only line endings, a number too big for a float."""

import pytest

import py_engine
from py_engine.app.protocol import handle
from py_engine.scenario.tracefile import parse
from support.published import azure_file, mooncake_file


def refused(name, text, *words, max_items=None):
    with pytest.raises(py_engine.ScenarioError) as e:
        parse(name, text, max_items)
    for w in words:
        assert w in e.value.message, (e.value.message, w)
    return e.value


def test_csv_with_optional_columns_blank_lines_skipped():
    r = parse("t.csv", "arrive,prompt,out,prefix_id\n0,10,3,1\n\n2.5,20,4,\n")
    assert r == {"items": [{"arrive": 0, "prompt": 10, "out": 3, "prefix_id": 1},
                           {"arrive": 2.5, "prompt": 20, "out": 4}],
                 "format": "CSV", "lines": [2, 4]}


def test_upper_case_headers_quoted_cells_and_every_line_ending():
    want = [{"arrive": 0, "prompt": 10, "out": 3}, {"arrive": 1, "prompt": 5, "out": 2}]
    for end in ("\n", "\r\n", "\r"):
        text = end.join(['\ufeffARRIVE, "Prompt" ,Out', '0,"10",3', '"1",5,"2"', ""])
        assert parse("t.csv", text)["items"] == want, repr(end)
    assert parse("t.jsonl", '{"arrive":0,"prompt":10,"out":3}\r{"arrive":1,"prompt":5,"out":2}')[
        "items"] == want


def test_jsonl_one_object_a_line():
    r = parse("t.jsonl", '{"arrive":0,"prompt":5,"out":2}\n{"arrive":1,"prompt":6,"out":1,'
                         '"priority":2,"hash_ids":[4,5]}\n')
    assert r["format"] == "JSONL" and r["items"][1]["priority"] == 2
    assert r["items"][1]["hash_ids"] == [4, 5]
    refused("t.jsonl", '{"arrive":0}\nnope\n', "t.jsonl line 2: not a JSON object")
    refused("t.jsonl", '{"a":1}\n[1, 2]\n', "line 2: not a JSON object")
    refused("t.jsonl", "[" * 100000 + "\n", "line 1: not a JSON object")


def test_hash_ids_in_a_csv_cell_are_ids_separated_by_spaces():
    r = parse("t.csv", "arrive,prompt,out,hash_ids\n0,600,3,1 2\n")
    assert r["items"] == [{"arrive": 0, "prompt": 600, "out": 3, "hash_ids": [1, 2]}]


def test_bad_files_get_the_line_and_what_is_wrong():
    refused("t.csv", "arrive,prompt\n0,1\n", "t.csv line 1: the header needs out")
    refused("t.csv", "arrive,prompt,out,colour\n0,1,1,red\n", "line 1: unknown column colour")
    refused("t.csv", "arrive,prompt,out\n0,1\n", "line 2: 2 values, the header has 3")
    refused("t.csv", "arrive,prompt,out\n0,10,3,9\n", "line 2: 4 values, the header has 3")
    refused("t.csv", "arrive,prompt,out\n", "t.csv: no requests")
    assert refused("t.csv", "arrive,prompt,out\n0,1\n").field == "trace"


def test_a_file_beyond_the_limit_is_refused_at_the_first_request_too_many():
    csv = "arrive,prompt,out\n" + "\n".join("%d,10,2" % i for i in range(30))
    refused("big.csv", csv, "big.csv line 27: more than 25 requests, the page's limit",
            max_items=25)
    jsonl = "\n".join('{"arrive":%d,"prompt":5,"out":1}' % i for i in range(30))
    assert parse("big.jsonl", jsonl, 30)["format"] == "JSONL"      # at the limit: fine
    refused("big.jsonl", jsonl + '\n{"arrive":99,"prompt":5,"out":1}', "line 31: more than 30",
            max_items=30)


def test_a_number_too_big_for_a_float_is_named_as_written():
    """1e400 became infinity, which crossed the page's JSON as null: "arrive = None"."""
    for name, text in (("t.csv", "arrive,prompt,out\n0,10,3\n1e400,5,2\n"),
                       ("t.jsonl", '{"arrive":0,"prompt":4,"out":1}\n{"arrive":1e400,"prompt":4,'
                                   '"out":1}\n')):
        items = handle({"method": "parse_trace", "params": {"name": name, "text": text}})[
            "result"]["items"]
        err = handle({"method": "simulate", "params": {"scenario": {"workload": {
            "items": items}}}})["error"]
        assert err["field"] == "workload.items[1].arrive"
        assert "'1e400'" in err["message"], err["message"]


def test_the_protocol_refuses_bad_params_as_data():
    for params in ({"name": "t.csv"}, {"name": "", "text": "a"}, {"name": "t.csv", "text": 5},
                   {"name": "t.csv", "text": "arrive,prompt,out\n0,1,1", "max_items": 0}):
        r = handle({"method": "parse_trace", "params": params})
        assert r["ok"] is False and r["error"]["type"] == "ScenarioError", params


# ------------------------------------------------------------ the published traces' own formats
# A serving engineer's export in the format of a trace we ship (traceformats.py) runs as it is:
# the published files, written back from the shipped columns (tests/support/published.py), give
# exactly the runs of the named traces.

@pytest.mark.parametrize("name, text_of", [("azure-conv-2023", lambda n: azure_file(n)),
                                           ("mooncake-conv-2025",
                                            lambda n: mooncake_file(n).decode())])
def test_a_published_trace_file_runs_as_the_named_trace(name, text_of):
    r = parse(name + (".csv" if name.startswith("azure") else ".jsonl"), text_of(name))
    assert r["format"].split()[0] == name.split("-")[0].capitalize()
    assert r["items"][0]["arrive"] == 0 and len(r["lines"]) == len(r["items"])
    server = {"slots": 64, "kv_tokens": 200_000}
    named = py_engine.simulate({"scheduler": "vllm", "server": server,
                                "workload": {"trace": {"name": name, "count": 300}}})
    mine = py_engine.simulate({"scheduler": "vllm", "server": server,
                               "workload": {"items": r["items"][:300]}})
    assert mine["requests"] == named["requests"] and mine["metrics"] == named["metrics"]
    if name.startswith("mooncake"):     # its hash ids came along: the prefix cache hits
        assert mine["metrics"]["prefix_hit_rate"] > 0


def test_azure_timestamps_are_ms_from_the_first_request_exactly():
    text = ("TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 23:59:59.9999999,10,2\r\n"
            "2023-11-17 00:00:00.0000300,20,3\r\n2023-11-16 23:59:59.9,5,1")
    r = parse("a.csv", text)
    assert [i["arrive"] for i in r["items"]] == [99.9999, 100.03, 0.0]     # ms, over midnight
    assert [i["prompt"] for i in r["items"]] == [10, 20, 5]
    assert parse("b.csv", "timestamp,contexttokens,generatedtokens\n0.5,10,2\n2,10,2\n")[
        "items"][1]["arrive"] == 1500.0        # seconds as numbers, read case-blind


def test_published_formats_refuse_a_bad_line_by_its_number():
    head = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
    refused("a.csv", head + "2023-11-16 18:15:46.1,10,2\nyesterday,10,2\n",
            "a.csv line 3: TIMESTAMP 'yesterday' is not a time")
    refused("a.csv", head + "2023-02-30 18:15:46.1,10,2\n", "line 2: TIMESTAMP", "not a date")
    refused("a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens,Model\n2023-11-16 18:15:46,1,1,x\n",
            "line 2: unknown column model in an Azure trace")
    line = '{"timestamp": 0, "input_length": 10, "output_length": 2, "hash_ids": [1]}\n'
    refused("m.jsonl", line + '{"timestamp": 5, "input_length": 10}\n',
            "m.jsonl line 2: no output_length (a Mooncake trace line has")
    refused("m.jsonl", line + line.replace('"hash_ids"', '"colour": 1, "hash_ids"'),
            "line 2: unknown key colour in a Mooncake trace line")
    # values go to the scenario's validator, which names the item (the page: its line)
    items = parse("a.csv", head + "2023-11-16 18:15:46.1,10,2\n2023-11-16 18:15:47,10,0\n")[
        "items"]
    with pytest.raises(py_engine.ScenarioError) as e:
        py_engine.simulate({"workload": {"items": items}})
    assert e.value.field == "workload.items[1].out"
