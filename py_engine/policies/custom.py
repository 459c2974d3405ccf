"""A reader's own scheduler: `{"scheduler": "custom", "custom": {"name", "code"}}` (SPEC §10).

The code is Python that defines one subclass of `Policy` (`from py_engine.policies import
Policy`), with the hooks and verbs every built-in policy has (base.py, sim/view.py). It runs in
the engine's own process, natively and in the page (where it is the reader's own code in their
own browser's worker), so this is not a sandbox; what it is:

- checked: the core checks every verb (a free slot, an arrived request not in a slot, ...) and
  refuses a bad decision with a PolicyError naming the rule; after each schedule() no request is
  both waiting and in a slot (popleft() before admit); the work cap applies as to any run.
- located: an exception in the code, a refused decision or a syntax error is a ScenarioError on
  field `custom.code` whose message starts "custom.code line N:" (the line in the reader's code).
- stopped: a hook that does not return within HOOK_SECONDS is interrupted natively (a POSIX
  interval timer in the main thread, armed only while the reader's code runs) with the same
  kind of message; in the page, where Python has no signals, the page stops its worker.
"""

import signal
import sys
import threading
import traceback

from ..errors import PolicyError, ScenarioError
from .base import Policy

FILENAME = "<custom policy>"
HOOKS = ("schedule", "horizon", "wants_arrivals", "grow", "extra_metrics")
HOOK_SECONDS = 2.0
MAX_CODE = 200_000


class PolicyTimeout(Exception):
    pass


def _line(exc):
    """The line of the reader's code an exception passed through last, or None."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == FILENAME:
            line = frame.lineno
    return line


def _located(exc, what):
    """A ScenarioError on custom.code saying where in the reader's code and what."""
    line = _line(exc)
    where = "custom.code line %d" % line if line is not None else "custom.code"
    return ScenarioError("custom.code", "line %s" % line if line is not None else "<code>",
                         "a policy whose hooks return", "%s: %s" % (where, what))


class _Watchdog:
    """Interrupts the reader's code once it has run HOOK_SECONDS without returning (natively,
    in the main thread; elsewhere it does nothing)."""

    def __init__(self):
        self.usable = (hasattr(signal, "setitimer") and sys.platform != "emscripten"
                       and threading.current_thread() is threading.main_thread())

    def __enter__(self):
        if self.usable:
            self.old = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, HOOK_SECONDS)
        return self

    def __exit__(self, *exc):
        if self.usable:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old)
        return False

    @staticmethod
    def _fire(signum, frame):
        raise PolicyTimeout()


def _guard(name, fn, watchdog):
    def hook(*args):
        try:
            with watchdog:
                return fn(*args)
        except PolicyTimeout as e:
            raise _located(e, "%s() did not return within %g s (an endless loop?)"
                           % (name, HOOK_SECONDS)) from None
        except PolicyError as e:
            raise _located(e, e.message) from None
        except ScenarioError:
            raise
        except Exception as e:     # the reader's bug: say which line and what
            raise _located(e, "%s: %s" % (type(e).__name__, e)) from None
    return hook


def compile_policy(name, code):
    """The reader's source -> a Policy subclass whose hooks are guarded (see the docstring)."""
    if not isinstance(code, str) or not code.strip():
        raise ScenarioError("custom.code", code if not isinstance(code, str) else "",
                            "Python source defining a subclass of Policy")
    try:
        compiled = compile(code, FILENAME, "exec")
    except SyntaxError as e:
        raise ScenarioError("custom.code", "line %s" % e.lineno, "Python source",
                            "custom.code line %s: %s" % (e.lineno, e.msg)) from None
    namespace = {"__name__": "custom_policy"}
    watchdog = _Watchdog()
    try:
        with watchdog:
            exec(compiled, namespace)
    except PolicyTimeout as e:
        raise _located(e, "the code did not finish loading within %g s" % HOOK_SECONDS) from None
    except Exception as e:
        raise _located(e, "%s: %s" % (type(e).__name__, e)) from None
    found = [v for v in namespace.values() if isinstance(v, type) and issubclass(v, Policy)
             and v is not Policy and v.__module__ == "custom_policy"]
    if len(found) != 1:
        raise ScenarioError("custom.code", "<%d classes>" % len(found),
                            "code that defines exactly one subclass of Policy",
                            "custom.code: defines %d subclasses of Policy; define one (class "
                            "MyPolicy(Policy): with a schedule(self) method)" % len(found))
    user = found[0]
    guarded = {h: _guard(h, getattr(user, h), watchdog) for h in HOOKS}
    init = user.__init__

    def __init__(self, sim, scenario, trace=None):
        try:
            with watchdog:
                init(self, sim, scenario, trace)
        except PolicyTimeout as e:
            raise _located(e, "__init__() did not return within %g s" % HOOK_SECONDS) from None
        except ScenarioError:
            raise
        except Exception as e:
            raise _located(e, "%s: %s" % (type(e).__name__, e)) from None

    schedule = guarded["schedule"]

    def checked_schedule(self):
        schedule(self)
        sim = self.sim._sim
        in_slot = sim.in_slot
        for r in sim.waiting:
            if r >= 0 and in_slot[r]:
                raise ScenarioError("custom.code", "request %d" % r, "a request admitted is "
                                    "taken from waiting", "custom.code: admit: request %d was "
                                    "admitted but left in sim.waiting (popleft() it first)" % r)
    attrs = {h: guarded[h] for h in HOOKS if h != "schedule"}
    attrs.update(schedule=checked_schedule, __init__=__init__, name="custom",
                 label=str(name or user.__name__)[:60], custom=True)
    return type(user.__name__, (user,), attrs)

