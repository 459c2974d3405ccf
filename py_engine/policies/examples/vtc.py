"""After the Virtual Token Counter (Sheng et al., "Fairness in Serving Large Language Models",
OSDI 2024): each client (here a request's prefix stream, a tenant's system prompt; one client
without) has a counter of the service it got, prompt tokens x 1 + output tokens x 2, charged when
a request is admitted; a free slot goes to the backlogged client with the smallest counter (its
oldest request), and a client that comes back from idle is lifted to the smallest backlogged
counter. The paper's bound, asserted at every decision: while two clients stay backlogged, the
gap between their counters grows past where it started by at most one request's charge."""
from py_engine.policies import Policy

W_PROMPT, W_OUT = 1, 2


class VTC(Policy):
    def __init__(self, sim, scenario, trace=None):
        super().__init__(sim, scenario, trace)
        self.counter, self.largest, self.gap0 = {}, 0, {}

    def client(self, r):
        t = self.trace
        return 0 if t is None or t.prefix_id is None or t.prefix_id[r] is None else t.prefix_id[r]

    def schedule(self):
        sim, c = self.sim, self.counter
        backlogged = {self.client(r) for r in sim.waiting}
        low = min((c[k] for k in backlogged if k in c), default=0)
        for k in backlogged:
            c[k] = max(c.get(k, low), low)       # the lift of a client back from idle
        self.gap0 = {(a, b): self.gap0.get((a, b), abs(c[a] - c[b]))
                     for a in backlogged for b in backlogged if a < b}
        for (a, b), g in self.gap0.items():
            assert abs(c[a] - c[b]) <= max(g, self.largest), "VTC's bound: clients %s, %s" % (a, b)
        while sim.free and sim.waiting:
            k = min({self.client(r) for r in sim.waiting}, key=lambda k: (c[k], k))
            r = next(r for r in sim.waiting if self.client(r) == k)
            sim.waiting.remove(r)
            sim.admit(r, self.chunk)
            cost = W_PROMPT * sim.prompt[r] + W_OUT * sim.out[r]
            c[k] += cost
            self.largest = max(self.largest, cost)
        left = {self.client(r) for r in sim.waiting}     # pairs still backlogged together
        self.gap0 = {p: g for p, g in self.gap0.items() if p[0] in left and p[1] in left}
