"""The references themselves, pinned by cases worked out by hand from the article."""

from references.batching import brute_force, static_closed_form


def test_closed_form_article_example():
    # 3 requests, cap 2: group 1 = max_pf 1 + max_out 10 - 1 = 10 passes; group 2 starts at 10
    reqs = [{"arrive": 0, "prompt": 100, "out": 10}, {"arrive": 0, "prompt": 600, "out": 3},
            {"arrive": 0, "prompt": 10, "out": 5}]
    assert static_closed_form(reqs, 2, 512) == (2 + 10 - 1) + (1 + 5 - 1)
    # a late group waits to fill
    reqs[2]["arrive"] = 100
    assert static_closed_form(reqs, 2, 512) == 100 + 5


def test_brute_force_matches_closed_form_by_hand():
    unit = (1, 0, 0)
    r = brute_force("static", [0, 0, 0], [100, 600, 10], [10, 3, 5], 2, 512, unit)
    assert r["passes"] == 11 + 5 and r["done_pass"] == [11, 11, 16]
    assert r["first_pass"] == [2, 2, 12]
    c = brute_force("continuous", [0, 0, 0], [100, 600, 10], [10, 3, 5], 2, 512, unit)
    # r1 needs 2 prefill passes + 2 more tokens -> done at pass 4, r2 joins at pass 5 -> done 9;
    # r0 done at pass 10
    assert c["done_pass"] == [10, 4, 9] and c["passes"] == 10
    assert c["tally"]["useful"] == 18 and c["tally"]["prefill"] == 1


def test_brute_force_slot_steps_partition():
    r = brute_force("continuous", [0, 5, 9], [3, 40, 7], [4, 2, 9], 2, 8, (1, 0, 0))
    assert sum(r["tally"].values()) == 2 * r["passes"]
    assert r["tally"]["useful"] == 4 + 2 + 9
