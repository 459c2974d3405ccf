"""The build-time snapshot: the native engine's answers to every request the page makes before its
own engine is live. Runs inside the venv (the engine needs numpy):

    .venv/bin/python -m tools.snapshot OUT_DIR       # writes OUT_DIR/index.json and its files

Which requests: the page's own builders decide (tools/startup_requests.mjs runs
web/engine/requests.js in Node) for the default view, every preset, every embedded figure, every
story step (in the page and embedded), and every example link in the README.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from .common import ROOT, BuildError

README_LINK = re.compile(r"example\.org/explorer/(\?[^\s\"'<>)`]*)")


def searches(presets: dict, figures: dict, story: list) -> list[str]:
    """The page states whose start-up requests are answered at build time (as URL queries)."""
    out = [""]
    out += [f"?preset={name}" for name in presets]
    out += [f"?embed={name}" for name in figures]
    out += [f"?story={i}" for i in range(1, len(story) + 1)]
    out += [f"?embed=story&story={i}" for i in range(1, len(story) + 1)]
    out += sorted(set(README_LINK.findall((ROOT / "README.md").read_text())))
    return out


def startup_requests(schema: dict, presets: dict, story: list) -> list[dict]:
    """[{key, request}] from the page's own request builders, run in Node."""
    payload = json.dumps({"schema": schema, "presets": presets, "story": story,
                          "figures": list(schema["figures"]),
                          "searches": searches(presets, schema["figures"], story)})
    try:
        p = subprocess.run(["node", str(ROOT / "tools" / "startup_requests.mjs")], input=payload,
                           capture_output=True, text=True, check=True, cwd=ROOT)
    except FileNotFoundError:
        raise BuildError("node is needed to list the page's start-up requests") from None
    except subprocess.CalledProcessError as e:
        raise BuildError(f"tools/startup_requests.mjs failed: {e.stderr.strip()}") from None
    return json.loads(p.stdout)


def write(out: Path) -> int:
    sys.path.insert(0, str(ROOT))
    from py_engine.app.protocol import handle

    def answer(req):
        resp = handle(req)
        if not resp.get("ok"):
            raise BuildError(f"snapshot request {json.dumps(req)} failed: {resp.get('error')}")
        return resp

    schema = answer({"method": "schema", "params": {}})["result"]
    presets = answer({"method": "presets", "params": {}})["result"]
    story = answer({"method": "story", "params": {}})["result"]
    out.mkdir(parents=True, exist_ok=True)
    index, first = {}, {"boot": [], "main": []}
    for i, entry in enumerate(startup_requests(schema, presets, story)):
        req = entry["request"]
        name = f"{i:03d}-{req['method']}.json"
        # allow_nan=False: the page parses these with JSON.parse, which has no NaN/Infinity.
        (out / name).write_text(json.dumps(answer(req), allow_nan=False, separators=(",", ":")))
        index[entry["key"]] = name   # the page's own canonical JSON of the request
        if entry["first"]:
            first[entry["first"]].append(name)
    (out / "index.json").write_text(json.dumps(index, indent=0))
    # for tools/site.py: the default view's first picture's answers, by who preloads them
    # (index.html: "boot"; engine/start.js on the default view only: "main")
    (out / "first-draw.json").write_text(json.dumps(first))
    return len(index)


if __name__ == "__main__":
    try:
        n = write(Path(sys.argv[1]))
    except BuildError as e:
        print(f"tools.snapshot: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"{n} answers")
