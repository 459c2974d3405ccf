"""The package's layers hold: read from the source (ast), not from anyone's word.

Every module of py_engine belongs to a layer (its folder, or a root module); a module imports only
from its own layer or lower ones, the imports between modules form no cycle, a function-local
import says why it is local, and no policy assigns to the simulation it is given.
"""

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "py_engine"

# lowest first: a module may import from its own layer and every layer before it
LAYERS = ["errors", "data", "sim", "model", "workload", "policies", "scenario", "analysis",
          "fleet", "api", "verify", "bench", "app", "__init__", "__main__"]
LOCAL_REASONS = ("start-up", "optional", "cycle", "on demand", "lazy")


def modules():
    """{dotted module name: path} of every module in the package."""
    out = {}
    for path in PKG.rglob("*.py"):
        rel = path.relative_to(PKG.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = modules()


def layer(name):
    """The layer of a dotted module name (py_engine.sim.core -> sim)."""
    parts = name.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1]


def resolve(module, node):
    """The dotted names an import statement in `module` brings in (package modules only)."""
    is_pkg = MODULES[module].name == "__init__.py"
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "py_engine"]
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    if node.level:
        base = base[:len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
        if target.split(".")[0] != "py_engine":
            return []
    names = []
    for a in node.names:    # `from . import x` imports the module x when there is one
        sub = target + "." + a.name
        names.append(sub if sub in MODULES else target)
    return names


def local_imports():
    """[(module, line, source line)] of every import inside a function, of any module."""
    out = []
    for module, path in MODULES.items():
        source = path.read_text()
        lines = source.splitlines()
        for f in ast.walk(ast.parse(source)):
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out += [(module, n.lineno, lines[n.lineno - 1]) for n in ast.walk(f)
                        if isinstance(n, (ast.Import, ast.ImportFrom))]
    return out


def imports():
    """[(module, imported module, line, source line)] between the package's modules."""
    out = []
    for module, path in MODULES.items():
        source = path.read_text()
        lines = source.splitlines()
        tree = ast.parse(source)
        typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in typing_only:
                for target in resolve(module, node):
                    if target in MODULES and target != module:
                        out.append((module, target, node.lineno, lines[node.lineno - 1]))
    return out


IMPORTS = imports()


def test_every_folder_is_a_package():
    """The page's memory snapshot imports what pkgutil.walk_packages finds (tools/memsnap.mjs),
    and it skips a folder without __init__.py: its modules then fail to import in the page."""
    folders = {p.parent for p in PKG.rglob("*.py") if "__pycache__" not in p.parts}
    missing = sorted(str(f.relative_to(PKG)) for f in folders if not (f / "__init__.py").exists())
    assert not missing, "folders without __init__.py: %s" % missing


def test_every_module_is_in_a_known_layer():
    unknown = sorted(m for m in MODULES if layer(m) not in LAYERS)
    assert not unknown, "modules outside the layers: %s" % unknown


def upward(imports):
    """The imports of a layer from a layer above it, in words."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    return ["%s:%d imports %s (%s above %s)" % (m, line, t, layer(t), layer(m))
            for m, t, line, _ in imports if rank[layer(t)] > rank[layer(m)]]


def test_nothing_imports_upward():
    bad = upward(IMPORTS)
    assert not bad, "\n".join(bad)


def test_no_import_cycle():
    graph = {}
    for m, t, _, _ in IMPORTS:
        # a package's __init__ importing its own modules is how a package is made, not a cycle
        if not t.startswith(m + "."):
            graph.setdefault(m, set()).add(t)
    state, stack = {}, []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in sorted(graph.get(m, ())):
            if state.get(t) == "open":
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(t):] + [t]))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_function_local_imports_say_why():
    silent = ["%s:%d %s" % (m, line, text.strip()) for m, line, text in local_imports()
              if not any(w in text for w in LOCAL_REASONS)]
    assert not silent, ("a function-local import needs a comment saying why (%s):\n"
                        % ", ".join(LOCAL_REASONS)) + "\n".join(silent)


def test_the_layer_check_sees_an_upward_import():
    """The check itself can fail: `from ..api import simulate` in sim/core.py is upward."""
    node = ast.parse("from ..api import simulate").body[0]
    (target,) = resolve("py_engine.sim.core", node)
    assert upward([("py_engine.sim.core", target, 1, "")]) == [
        "py_engine.sim.core:1 imports py_engine.api (api above sim)"]
    assert upward([("py_engine.api", "py_engine.sim.core", 1, "")]) == []


# ---------------------------------------------------------------- policies never write the sim

def sim_writes(source):
    """Assignments whose target is the simulation or inside it: sim.x = / self.sim.x[i] += ..."""
    def rooted_in_sim(node):
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
            if isinstance(node, ast.Name) and node.id == "sim":
                return True
            if isinstance(node, ast.Attribute) and node.attr == "sim":
                return True
        return False

    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        else:
            continue
        for t in targets:
            for leaf in ast.walk(t):
                if isinstance(leaf, (ast.Attribute, ast.Subscript)) and isinstance(
                        leaf.ctx, ast.Store) and rooted_in_sim(leaf):
                    bad.append(node.lineno)
    return bad


@pytest.mark.parametrize("path", sorted((PKG / "policies").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(PKG)))
def test_no_policy_assigns_to_the_simulation(path):
    bad = sim_writes(path.read_text())
    assert not bad, "%s assigns to the simulation at lines %s: act through its verbs (sim/view.py)" % (
        path.relative_to(PKG), bad)


def test_the_write_check_sees_each_kind_of_write():
    for code in ("self.sim.work += 3", "sim.cached_tokens[r] = 1", "self.sim.preemptions[v] += 1",
                 "sim.now = 5", "self.sim.res[s].phase = 2"):
        assert sim_writes(code) == [1], code
    for code in ("self.samples = 1", "sim.waiting.append(3)", "x = sim.now", "self.sim = sim"):
        assert sim_writes(code) == [], code


def test_the_view_refuses_assignment():
    from py_engine.model.cost import Cost
    from py_engine.sim.core import Sim
    from py_engine.sim.view import SimView
    view = SimView(Sim(([0], [5], [3]), 2, Cost(1, 0, 0)))
    with pytest.raises(AttributeError, match="cannot set sim.work"):
        view.work = 1
