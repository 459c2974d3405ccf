"""What a scenario field is (py_engine/scenario/fields.py declares every one).

Types: int, float, choice, bool, items (an explicit trace), cost (a cost-model name, or one of the
object forms named by `object_choices`; an object form's fields are the children of this path
whose `form` is its name, shown only then; every form but the first is written with "kind": its
name). `words`: text values an int field also takes (kv_tokens "auto"). `nullable` fields also take null (e.g. kv_tokens null =
unlimited). `when={path: values}`: the field exists only while another field has one of those values
(the Poisson rate only for Poisson arrivals); otherwise it is absent from the normalised scenario and
hidden in the page. `shown_if={path: values}`: always in the scenario, but only worth showing then
(the swap bandwidth matters only for swap preemption). `applies_to`: the schedulers the field affects (the page shows it only when one of
them is on screen). `slider`: the comfortable range of the page's slider, (min, max, step) or (min, max, "log")
for nice values, four a doubling (web/state/slider.js; the text box beside it takes the whole
range). `page_max`: a tighter bound for runs in the browser (bigger ones belong to the CLI).
`url_codec` "base64url": the URL carries the text as base64url of its UTF-8 bytes (a policy's source).
`aliases`: former names of the field, still read in scenarios, URLs and flags (old links keep
working); giving both is an error. `hint_when`: [({path: values}, hint), ...]: the page's hint
while other fields have those values (the first that holds; else `hint`), e.g. an example that
works with the cost model chosen.
"""


class Field:
    __slots__ = ("path", "type", "default", "min", "max", "choices", "nullable", "unit", "label",
                 "hint", "description", "url", "flag", "applies_to", "when", "shown_if", "sweep",
                 "slider", "page_max", "control", "object_choices", "form", "shorthand", "aliases",
                 "words", "url_codec", "empty", "hint_when")

    def __init__(self, path, type, default, description, *, min=None, max=None, choices=None,
                 nullable=False, unit=None, label=None, hint="", url=None, flag=None,
                 applies_to=None, when=None, shown_if=None, sweep=False, slider=None,
                 page_max=None, control=True, object_choices=None, form=None, shorthand=False,
                 aliases=(), words=(), url_codec=None, empty=None, hint_when=()):
        self.path, self.type, self.default, self.description = path, type, default, description
        self.min, self.max, self.choices, self.nullable = min, max, choices, nullable
        self.unit, self.hint = unit, hint
        leaf = path.rsplit(".", 1)[-1]
        self.label = label or leaf
        self.url = url or leaf
        self.flag = flag or self.url.replace("_", "-")
        self.applies_to, self.when, self.shown_if = applies_to, when or {}, shown_if or {}
        self.sweep, self.slider = sweep, slider
        self.page_max, self.control = page_max, control
        self.object_choices = list(object_choices or [])  # cost: the choices that are objects
        self.form = form                    # a cost object's field: the form it belongs to
        self.words = list(words)            # text values an int field also takes
        self.shorthand = shorthand          # the parent object may be given as just this value
        self.aliases = list(aliases)        # older names still read (key, URL name and flag)
        self.url_codec = url_codec          # "base64url": the URL carries base64url(UTF-8 text)
        # what an empty (null) input means, in the page's placeholder: "unlimited" or "fitted"
        self.empty = empty or ("unlimited" if nullable else None)
        self.hint_when = [[dict(cond), text] for cond, text in hint_when]

    @property
    def parent(self):
        return self.path.rpartition(".")[0]

    @property
    def leaf(self):
        return self.path.rpartition(".")[2]
