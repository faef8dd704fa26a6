"""Compact rendering of plain-protocol pages: drop the generic 'User:'/'Assistant:' label when the side already
starts with its speaker's name ('User: Caroline: hi' -> 'Caroline: hi'). Saves one word per side.

usage: python compact.py fresh|plain [--stm none|compact]
Same LOCO-CV as cv.py, with the page costs of the compact rendering (checked against a renderer).
"""
import argparse, re
import numpy as np
from common import PAST_OVERHEAD, count_words, paired_diff, table
from cv import Setup, cross_validate
from langchain_memoryos.schema import fence_memory, PAST_CONVERSATION_TITLE

_NAMED = re.compile(r"^[A-Z][\w'.-]{0,30}: ")


def compact_lines(p):
    out = []
    for label, text in ((p.user_label, p.user_input), (p.agent_label, p.agent_response)):
        if text:
            t = " ".join(text.split())
            out.append(t if _NAMED.match(t) else f"{label}: {t}")
    return out


def render(cv, chosen):
    lines, day = [], None
    for i in sorted(chosen):
        p = cv.pages[i]
        if p.timestamp.date() != day:
            day = p.timestamp.date(); lines.append(f"[{day.isoformat()}]")
        lines += compact_lines(p)
    return fence_memory(f"## {PAST_CONVERSATION_TITLE}\n" + "\n".join(lines))


ap = argparse.ArgumentParser()
ap.add_argument("protocol", choices=["fresh", "plain"])
ap.add_argument("--stm", default="none")
a = ap.parse_args()
setup = Setup(a.protocol, a.stm, False)
NAMES = "win,win3,date,sess_max,nb_max,tile0.45_max,k".split(",")
flat0 = setup.run({}, setup.convs, 1000, name="flat")
held0, _ = cross_validate(setup, 1000, NAMES)
for cv in setup.convs:
    cv.words = np.array([sum(count_words(l) for l in compact_lines(p)) for p in cv.pages])
flat1 = setup.run({}, setup.convs, 1000, name="flat compact")
held1, chosen = cross_validate(setup, 1000, NAMES)
# check the accounting on a few questions
cv = setup.convs[0]
from common import pack
o, used = pack(np.arange(cv.n), cv.words, cv.day_idx, 1000)
assert count_words(render(cv, o)) == used, (count_words(render(cv, o)), used)
print(f"## {a.protocol} stm={a.stm}: page rendering as the package (User: Name: ...) vs compact (Name: ...)")
print(table({"flat hybrid, package rendering": flat0, "structured, package rendering": held0,
             "flat hybrid, compact rendering": flat1, "structured, compact rendering": held1}))
print("compact - package rendering (structured):", paired_diff(held1, held0))
