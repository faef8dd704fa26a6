"""The constants to ship: coordinate ascent on ALL five dev conversations (recommended set win,win3,date,k), per
protocol, and one shared rounded set evaluated in-sample on every protocol (in-sample: NOT a held-out figure;
the LOCO-CV figures in REPORT.md are the honest ones)."""
from common import paired_diff, table
from cv import Setup, fit

NAMES = "win,win3,date,k".split(",")
SHARED = {"win": 1, "win3": 1.5, "date": 0.2, "k": 10}
for proto, stm in (("harness", "full"), ("fresh", "full"), ("plain", "none"), ("plain", "compact")):
    s = Setup(proto, stm, False)
    params, best = fit(s, s.convs, 1000, NAMES)
    flat = s.run({}, s.convs, 1000, name="flat")
    shared = s.run(SHARED, s.convs, 1000, name="shared")
    print(f"## {proto}{' stm=' + stm if proto == 'plain' else ''}: fit on all 5 -> {params} (in-sample {100 * best:.1f})")
    print(table({"flat hybrid ≤1000": flat, f"shared constants {SHARED} (in-sample)": shared}))
    print("shared - flat:", paired_diff(shared, flat), flush=True)
