"""Reference policies written on the public hooks, each a file that runs unchanged as a reader's
own code (`{"scheduler": "custom", "custom": {"code": <the file>}}`, or `python -m py_engine run
--policy-file py_engine/policies/examples/<name>.py`): start from one. They register nothing:
the built-in schedulers are the modules one level up."""

import os

HERE = os.path.dirname(__file__)


def _read():
    out = []
    for f in sorted(os.listdir(HERE)):
        if f.endswith(".py") and f != "__init__.py":
            with open(os.path.join(HERE, f), encoding="utf-8") as fh:
                code = fh.read()
            doc = code.split('"""')[1] if code.startswith('"""') else ""
            out.append({"name": f[:-3], "summary": " ".join(doc.split()).split(". ")[0],
                        "code": code})
    return out


# Read once, at import: in the page the engine is restored from a memory snapshot, which holds
# every imported module but not the wheel's files.
_SOURCES = _read()


def sources():
    """[{"name", "summary" (its docstring's first sentence), "code"}] of every example, by
    name: what the page's examples menu offers."""
    return [dict(e) for e in _SOURCES]
